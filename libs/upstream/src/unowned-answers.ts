import { Logger } from '@nestjs/common';

/**
 * Answers the connection owes to server requests that are no caller's (pings, -32601s), at
 * most in flight at once, and at most waiting: an upstream that packs thousands of requests
 * into one answer gets the first ones answered, and the rest dropped with one log line a
 * minute, not a POST each at once ahead of every caller's call (docs/security.md, "What an
 * upstream can make the gateway do").
 */
const IN_FLIGHT = 8;
const WAITING = 64;
const DROPPED_LOG_EVERY_MS = 60_000;
const logger = new Logger('Upstream');

/** One upstream's bounded queue of answers that belong to no caller. */
export class UnownedAnswers {
  private inFlight = 0;
  private readonly waiting: (() => Promise<void>)[] = [];
  private droppedSince = 0;
  private droppedLoggedAt = -Infinity;

  /** @param upstreamId named in the log line when answers are dropped */
  constructor(private readonly upstreamId: string) {}

  /** Sends one answer (its failure ignored), queues it, or drops it (logged). */
  send(answer: () => Promise<void>): void {
    if (this.inFlight < IN_FLIGHT) {
      this.inFlight += 1;
      void answer()
        .catch(() => undefined)
        .finally(() => {
          this.inFlight -= 1;
          const next = this.waiting.shift();
          if (next !== undefined) this.send(next);
        });
      return;
    }
    if (this.waiting.length < WAITING) {
      this.waiting.push(answer);
      return;
    }
    this.droppedSince += 1;
    const now = performance.now();
    if (now - this.droppedLoggedAt < DROPPED_LOG_EVERY_MS) return;
    this.droppedLoggedAt = now;
    logger.warn(
      `Upstream ${this.upstreamId}: ${this.droppedSince} server request(s) that belong to no caller left unanswered: more than ${IN_FLIGHT + WAITING} were owed at once (docs/security.md, "What an upstream can make the gateway do")`,
    );
    this.droppedSince = 0;
  }
}
