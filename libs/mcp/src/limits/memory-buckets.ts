import {
  refillMillis,
  takeToken,
  type BucketSettings,
  type BucketState,
  type BucketVerdict,
} from './token-bucket';

/** The most buckets one replica keeps in memory (about 200 bytes each). */
const MAX_BUCKETS = 100_000;
/** The most one caller holds (its per-tool buckets and its own). */
const MAX_BUCKETS_PER_OWNER = 10_000;

/** A bucket, and the settings it is kept by (how long it takes to be full again untouched). */
interface Entry {
  readonly state: BucketState;
  readonly settings: BucketSettings;
  /** Whose bucket it is (the caller), what its share is counted by. */
  readonly owner: string;
}

/**
 * Token buckets in this process (one replica's own count). A bucket left alone until it is
 * full again is the same as no bucket: such entries are swept once the map grows, each by its
 * own settings (a per-subject bucket may refill in a second while a per-tool one takes an hour:
 * swept by the other's time, an empty bucket would be full again at once). Bounded: a caller
 * naming a new tool on every call (names the catalog never held make buckets too, as the
 * limit is taken before the name is looked up) makes a bucket each, kept until full again. So
 * a caller holds at most `maxPerOwner`: past it, every new key of that caller shares one
 * overflow bucket, and no bucket it holds is given back before it refills (a flood resets
 * nothing, its own or another's); past `maxBuckets` in all (very many callers at once), the
 * least recently used of any goes.
 */
export class MemoryBuckets {
  /** In the order of use: the least recently used first. */
  private readonly buckets = new Map<string, Entry>();
  /** Each owner's keys, in the order of use. */
  private readonly byOwner = new Map<string, Set<string>>();
  private nextSweepAt = 0;

  /** @param now monotonic ms */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly sweepAbove = 10_000,
    private readonly maxBuckets = MAX_BUCKETS,
    private readonly maxPerOwner = MAX_BUCKETS_PER_OWNER,
  ) {}

  /** @param owner whose bucket it is (the caller's key): what its share counts */
  take(wanted: string, settings: BucketSettings, owner = ''): BucketVerdict {
    const now = this.now();
    let keys = this.byOwner.get(owner);
    if (keys === undefined) {
      keys = new Set();
      this.byOwner.set(owner, keys);
    }
    const key =
      keys.size >= this.maxPerOwner && !this.buckets.has(wanted)
        ? `\u0000overflow:${owner}`
        : wanted;
    const held = this.buckets.get(key);
    const { state, verdict } = takeToken(held?.state, settings, now);
    // moved to the end of both orders of use (the owner's set kept, however small)
    if (held !== undefined) {
      this.buckets.delete(key);
      this.byOwner.get(held.owner)?.delete(key);
    }
    this.buckets.set(key, { state, settings, owner });
    keys.add(key);
    if (this.buckets.size > this.sweepAbove && now >= this.nextSweepAt) this.sweep(now);
    // (the sweep above runs on its own schedule: a flood must not cost a sweep per call)
    if (this.buckets.size > this.maxBuckets)
      for (const oldest of this.buckets.keys()) {
        if (this.buckets.size <= this.maxBuckets) break;
        this.forget(oldest);
      }
    return verdict;
  }

  private forget(key: string): void {
    const entry = this.buckets.get(key);
    if (entry === undefined) return;
    this.buckets.delete(key);
    const keys = this.byOwner.get(entry.owner);
    keys?.delete(key);
    if (keys?.size === 0) this.byOwner.delete(entry.owner);
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    let soonest = 10_000;
    for (const [key, { state, settings }] of this.buckets) {
      const full = refillMillis(settings);
      if (now - state.updatedAt >= full) this.forget(key);
      else soonest = Math.min(soonest, full);
    }
    this.nextSweepAt = now + soonest;
  }
}
