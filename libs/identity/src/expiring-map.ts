/** One remembered value and the time (on the map's clock, ms) after which it is gone. */
interface Entry<V> {
  readonly value: V;
  readonly until: number;
}

/**
 * A Map of values that expire, bounded in entries, for what this lib remembers per token
 * (verified headers, introspection answers, tokens recently active, exchanged tokens).
 *
 * An expired entry is not only skipped on read: every `set` first drops the expired entries at
 * the map's old end, so the map holds about what the last lifetime's worth of keys left,
 * not `maxEntries` of dead tokens (an agent fleet whose tokens rotate would otherwise keep every
 * map at its cap, each entry holding a whole token; docs/operations.md §13). Entries are in
 * insertion order and the drop stops at the first one still alive, so each entry is dropped
 * once: constant work per `set` on average. Past `maxEntries`, the oldest insertions go first.
 */
export class ExpiringMap<V> {
  private readonly entries = new Map<string, Entry<V>>();

  /**
   * @param maxEntries most entries kept at once
   * @param now the clock `until` is read on, ms (Date.now or performance.now)
   */
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  /** The value of `key` while alive at `now`; an expired one is dropped. */
  get(key: string, now = this.now()): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers `value` until `until` (a key set again moves to the new end). */
  set(key: string, value: V, until: number, now = this.now()): void {
    this.entries.delete(key);
    for (const [k, entry] of this.entries) {
      if (entry.until > now && this.entries.size < this.maxEntries) break;
      this.entries.delete(k);
    }
    if (until > now) this.entries.set(key, { value, until });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [k, entry] of this.entries) if (matches(entry.value)) this.entries.delete(k);
  }

  get size(): number {
    return this.entries.size;
  }
}
