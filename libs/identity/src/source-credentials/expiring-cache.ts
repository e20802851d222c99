import { ExpiringMap } from '../expiring-map';

/**
 * A cache of values that expire, with one fetch at a time per key (single flight): callers
 * asking for a key whose fetch is running wait for that fetch. A failed fetch is not cached.
 * Bounded as an ExpiringMap: expired entries go as new ones come, past `maxEntries` the oldest.
 */
export class ExpiringCache<T> {
  private readonly entries: ExpiringMap<T>;
  private readonly pending = new Map<string, Promise<T>>();

  /**
   * @param now monotonic clock in ms (performance.now in production)
   * @param maxEntries most entries kept
   */
  constructor(now: () => number, maxEntries = 10_000) {
    this.entries = new ExpiringMap<T>(maxEntries, now);
  }

  /**
   * The cached value of `key` while fresh, else the result of `fetch` (shared by every caller
   * of the key until it settles), cached until the `refreshAt` it returns.
   */
  get(key: string, fetch: () => Promise<{ value: T; refreshAt: number }>): Promise<T> {
    const fresh = this.entries.get(key);
    if (fresh !== undefined) return Promise.resolve(fresh);
    const running = this.pending.get(key);
    if (running !== undefined) return running;
    const started = fetch().then(
      ({ value, refreshAt }) => {
        this.pending.delete(key);
        this.entries.set(key, value, refreshAt);
        return value;
      },
      (err: unknown) => {
        this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, started);
    return started;
  }

  get size(): number {
    return this.entries.size;
  }
}
