/**
 * The shortest time between two deliveries of one resource's updates to the same sessions
 * (docs/operations.md §10 "Resource subscriptions"). `notifications/resources/updated` says only
 * that a URI changed, so updates that come closer together than this are one update: the first
 * goes at once, those after it in a burst are coalesced into one sent when the interval is up,
 * never dropped.
 */
export const RESOURCE_UPDATE_MIN_INTERVAL_MS = 500;
/** Past this many remembered keys, those whose interval is over are forgotten. */
const REMEMBERED_KEYS = 10_000;

/**
 * Coalesces what one key (an upstream's URI, for a set of sessions) would send more often than
 * once per interval: an upstream that sends a thousand updates a second for one URI causes two
 * deliveries a second, to this replica's streams and to the other replicas, not a thousand.
 */
export class UpdateCoalescer {
  private readonly last = new Map<string, number>();
  private sweptAt = Number.NEGATIVE_INFINITY;
  /** What waits per key: its timer, and the newest send offered (the burst's last word). */
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; send: () => void }>();

  constructor(
    private readonly intervalMs = RESOURCE_UPDATE_MIN_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `send` now, or when the key's interval is up; one already waiting is replaced by it, so
   * what is sent at the end of a burst is its newest update.
   */
  offer(key: string, send: () => void): void {
    const waiting = this.pending.get(key);
    if (waiting !== undefined) {
      waiting.send = send;
      return;
    }
    const now = this.now();
    const last = this.last.get(key);
    if (last === undefined || now - last >= this.intervalMs) {
      this.forgetOld(now);
      this.last.set(key, now);
      send();
      return;
    }
    const entry = {
      send,
      timer: setTimeout(
        () => {
          this.pending.delete(key);
          this.last.set(key, this.now());
          entry.send();
        },
        last + this.intervalMs - now,
      ),
    };
    entry.timer.unref();
    this.pending.set(key, entry);
  }

  /** Updates waiting for their interval. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Drops what waits (at shutdown). */
  close(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.last.clear();
  }

  /**
   * Past REMEMBERED_KEYS, forgets the keys whose interval is over — at most once an interval,
   * so an upstream cycling through many URIs does not make every send walk them all.
   */
  private forgetOld(now: number): void {
    if (this.last.size < REMEMBERED_KEYS || now - this.sweptAt < this.intervalMs) return;
    this.sweptAt = now;
    for (const [key, at] of this.last)
      if (now - at >= this.intervalMs && !this.pending.has(key)) this.last.delete(key);
  }
}
