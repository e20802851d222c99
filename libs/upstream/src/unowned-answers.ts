import { Logger } from '@nestjs/common';
import { CountedWarning } from '@app/observability';

const UPSTREAM_LOGGER = new Logger('Upstream');

/**
 * Answers the connection owes to server requests that are no caller's (pings, -32601s), at
 * most in flight at once, and at most waiting: an upstream that packs thousands of requests
 * into one answer gets the first ones answered, and the rest dropped with one log line a
 * minute, not a POST each at once ahead of every caller's call (docs/security.md, "What an
 * upstream can make the gateway do").
 */
const IN_FLIGHT = 8;
const WAITING = 64;

/** One upstream's bounded queue of answers that belong to no caller. */
export class UnownedAnswers {
  private inFlight = 0;
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly dropped: CountedWarning;

  /** @param upstreamId named in the log line when answers are dropped */
  constructor(upstreamId: string) {
    this.dropped = new CountedWarning(
      (count) =>
        `Upstream ${upstreamId}: ${count} server request(s) that belong to no caller left unanswered: more than ${IN_FLIGHT + WAITING} were owed at once (docs/security.md, "What an upstream can make the gateway do")`,
      UPSTREAM_LOGGER,
    );
  }

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
    this.dropped.count();
  }
}
