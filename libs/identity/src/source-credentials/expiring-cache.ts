/** One cached value and the monotonic time (ms) after which it must be fetched again. */
interface Entry<T> {
  readonly value: T;
  readonly refreshAt: number;
}

/**
 * A cache of values that expire, with one fetch at a time per key (single flight): callers
 * asking for a key whose fetch is running wait for that fetch. A failed fetch is not cached.
 * Bounded: past `maxEntries`, expired entries are swept, then the oldest are dropped.
 */
export class ExpiringCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly pending = new Map<string, Promise<T>>();

  /**
   * @param now monotonic clock in ms (performance.now in production)
   * @param maxEntries most entries kept
   */
  constructor(
    private readonly now: () => number,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * The cached value of `key` while fresh, else the result of `fetch` (shared by every caller
   * of the key until it settles), cached until the `refreshAt` it returns.
   */
  get(key: string, fetch: () => Promise<{ value: T; refreshAt: number }>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      if (entry.refreshAt > this.now()) return Promise.resolve(entry.value);
      this.entries.delete(key);
    }
    const running = this.pending.get(key);
    if (running !== undefined) return running;
    const started = fetch().then(
      ({ value, refreshAt }) => {
        this.pending.delete(key);
        if (refreshAt > this.now()) this.store(key, { value, refreshAt });
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

  private store(key: string, entry: Entry<T>): void {
    if (this.entries.size >= this.maxEntries) {
      const now = this.now();
      for (const [k, e] of this.entries) if (e.refreshAt <= now) this.entries.delete(k);
      // still full: the oldest insertions go first (a Map iterates in insertion order)
      for (const k of this.entries.keys()) {
        if (this.entries.size < this.maxEntries) break;
        this.entries.delete(k);
      }
    }
    this.entries.set(key, entry);
  }
}
