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
  private readonly pending = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly intervalMs = RESOURCE_UPDATE_MIN_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `send` now, or once when the key's interval is up (with one already waiting: no more). */
  offer(key: string, send: () => void): void {
    if (this.pending.has(key)) return;
    const now = this.now();
    const last = this.last.get(key);
    if (last === undefined || now - last >= this.intervalMs) {
      this.forgetOld(now);
      this.last.set(key, now);
      send();
      return;
    }
    const timer = setTimeout(
      () => {
        this.pending.delete(key);
        this.last.set(key, this.now());
        send();
      },
      last + this.intervalMs - now,
    );
    timer.unref();
    this.pending.set(key, timer);
  }

  /** Updates waiting for their interval. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Drops what waits (at shutdown). */
  close(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.last.clear();
  }

  private forgetOld(now: number): void {
    if (this.last.size < REMEMBERED_KEYS) return;
    for (const [key, at] of this.last)
      if (now - at >= this.intervalMs && !this.pending.has(key)) this.last.delete(key);
  }
}
