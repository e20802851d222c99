import { Logger } from '@nestjs/common';
import { MAX_MESSAGE_DEPTH, MAX_MESSAGE_VALUES } from './reply-reader';

const LOG_EVERY_MS = 60_000;
const logger = new Logger('Upstream');

/**
 * Counts the notifications one upstream's listen streams dropped as too deep or too wide
 * (docs/operations.md §10 "Nesting", "Width") and says so in one log line a minute at most:
 * an upstream that sends a burst of them costs one line, not one each.
 */
export class DroppedMessages {
  private since = 0;
  private loggedAt = -Infinity;

  /** @param upstreamId named in the log line */
  constructor(private readonly upstreamId: string) {}

  count(): void {
    this.since += 1;
    const now = performance.now();
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = now;
    logger.warn(
      `Upstream ${this.upstreamId}: ${this.since} notification(s) on a subscriptions/listen stream dropped unread: nested deeper than ${MAX_MESSAGE_DEPTH} levels or holding more than ${MAX_MESSAGE_VALUES} JSON values (docs/operations.md §10 "Nesting"); the listen goes on`,
    );
    this.since = 0;
  }
}
