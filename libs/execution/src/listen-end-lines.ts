/** After a key's first line (at once), at most one line per key in this many ms. */
export const LISTEN_LINE_EVERY_MS = 60_000;
/** Keys remembered before those whose minute is over are forgotten. */
const REMEMBERED = 1024;

interface Pending {
  /** Occurrences since the last line, this one included. */
  count: number;
  loggedAt: number;
}

/**
 * The log lines of the upstream listens the gateway holds for clients (UpstreamListener): how
 * often a listen ends, and whether it is refused, is the upstream's choice, and every client
 * stream holds a listen on it (docs/operations.md §11 "Notification streams"), so a line each
 * time would let one upstream write a line per client stream every few seconds, for as long
 * as they listen (docs/security.md "Hostile sources: bounded work"); likewise a 2025 session's
 * subscription moved to a 2026 owner that cannot be bridged (ResourceSubscriptions), which an
 * upstream toggling its listing of a URI causes for every session at every round. Counted per
 * upstream instead: the first line at once, then at most one a minute, saying how many since.
 */
export class ListenEndLines {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * One occurrence for `upstreamId`; `line` makes its line, given how many occurred since the
   * last one (this one included), when one is due.
   */
  note(upstreamId: string, line: (count: number) => string): void {
    const now = this.now();
    let pending = this.pending.get(upstreamId);
    if (pending === undefined) {
      this.sweep(now);
      pending = { count: 0, loggedAt: Number.NEGATIVE_INFINITY };
      this.pending.set(upstreamId, pending);
    }
    pending.count += 1;
    if (now - pending.loggedAt < LISTEN_LINE_EVERY_MS) return;
    this.write(line(pending.count));
    pending.count = 0;
    pending.loggedAt = now;
  }

  /**
   * Past REMEMBERED upstreams (registered and removed over time), forgets those whose minute
   * is over: their next line would come at once anyway, only their count is lost.
   */
  private sweep(now: number): void {
    if (this.pending.size < REMEMBERED) return;
    for (const [key, pending] of this.pending)
      if (now - pending.loggedAt >= LISTEN_LINE_EVERY_MS) this.pending.delete(key);
  }
}
