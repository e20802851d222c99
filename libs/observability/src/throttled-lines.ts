/** After a key's first line (at once), at most one line per key in this many ms. */
export const THROTTLED_LINE_EVERY_MS = 60_000;
/** Keys remembered before those whose minute is over are forgotten. */
const REMEMBERED = 1024;

/** The line for `count` occurrences since the last one; several lines for one occurrence's detail. */
export type ThrottledLine = (count: number) => string | readonly string[];

interface Pending {
  /** Occurrences since the last line, this one included. */
  count: number;
  loggedAt: number;
  /** The line(s) of the last occurrence, written for the count when the minute ends. */
  line: ThrottledLine;
  /** The end-of-minute line for the occurrences held back, while one is due. */
  summary?: ReturnType<typeof setTimeout>;
}

/**
 * Log lines an outsider decides the number of (a hostile upstream's answers and notifications,
 * a caller's requests, a publisher on Redis): counted per key (an upstream id, a kind of
 * refusal), the first line at once, then at most one a minute saying how many occurred since,
 * so a flood costs one line a minute per key, not one each, and none is left uncounted
 * (docs/operations.md §4 "What outsiders can make the gateway log").
 */
export class ThrottledLines {
  private readonly pending = new Map<string, Pending>();

  /** @param write where a due line goes (a Logger's warn or log) */
  constructor(private readonly write: (line: string) => void) {}

  /**
   * One occurrence for `key`; `line` makes its line, given how many occurred since the last
   * one (this one included), when one is due: now when the key's last line is a minute old,
   * else at the end of that minute (with the last occurrence's `line`).
   */
  note(key: string, line: ThrottledLine): void {
    const now = performance.now();
    let pending = this.pending.get(key);
    if (pending === undefined) {
      this.sweep(now);
      pending = { count: 0, loggedAt: Number.NEGATIVE_INFINITY, line };
      this.pending.set(key, pending);
    }
    pending.count += 1;
    pending.line = line;
    const wait = pending.loggedAt + THROTTLED_LINE_EVERY_MS - now;
    if (wait > 0) {
      pending.summary ??= setTimeout(() => this.summarise(pending), wait).unref();
      return;
    }
    this.flush(pending, now);
  }

  private summarise(pending: Pending): void {
    pending.summary = undefined;
    if (pending.count > 0) this.flush(pending, performance.now());
  }

  private flush(pending: Pending, now: number): void {
    const lines = pending.line(pending.count);
    if (typeof lines === 'string') this.write(lines);
    else for (const line of lines) this.write(line);
    pending.count = 0;
    pending.loggedAt = now;
  }

  /**
   * Past REMEMBERED keys (upstreams registered and removed over time), forgets those whose
   * minute is over and that hold nothing back: their next line would come at once anyway.
   */
  private sweep(now: number): void {
    if (this.pending.size < REMEMBERED) return;
    for (const [key, pending] of this.pending)
      if (pending.count === 0 && now - pending.loggedAt >= THROTTLED_LINE_EVERY_MS)
        this.pending.delete(key);
  }
}

/**
 * One warning that may be due many times a second (what a hostile upstream makes the gateway
 * drop): a ThrottledLines of one key.
 */
export class CountedWarning {
  private readonly lines: ThrottledLines;

  /**
   * @param line the log line for `count` occurrences since the last one
   * @param logger where it is written
   */
  constructor(
    private readonly line: (count: number) => string,
    logger: { warn(line: string): void },
  ) {
    this.lines = new ThrottledLines((text) => {
      logger.warn(text);
    });
  }

  count(): void {
    this.lines.note('', this.line);
  }
}
