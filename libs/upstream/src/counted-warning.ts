import { Logger } from '@nestjs/common';

const LOG_EVERY_MS = 60_000;
const UPSTREAM_LOGGER = new Logger('Upstream');

/**
 * A warning that may be due many times a second (what a hostile upstream makes the gateway
 * drop): each occurrence is counted, and one line a minute at most says how many since the last
 * line, so a burst costs one line, not one each.
 */
export class CountedWarning {
  private since = 0;
  private loggedAt = -Infinity;

  /**
   * @param line the log line for `count` occurrences since the last one
   * @param logger where it is written (the upstream's by default)
   */
  constructor(
    private readonly line: (count: number) => string,
    private readonly logger: Logger = UPSTREAM_LOGGER,
  ) {}

  count(): void {
    this.since += 1;
    const now = performance.now();
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = now;
    this.logger.warn(this.line(this.since));
    this.since = 0;
  }
}
