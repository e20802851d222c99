import {
  refillMillis,
  takeToken,
  type BucketSettings,
  type BucketState,
  type BucketVerdict,
} from './token-bucket';

/** The most buckets one replica keeps in memory (about 200 bytes each). */
const MAX_BUCKETS = 100_000;

/** A bucket, and the settings it is kept by (how long it takes to be full again untouched). */
interface Entry {
  readonly state: BucketState;
  readonly settings: BucketSettings;
}

/**
 * Token buckets in this process (one replica's own count). A bucket left alone until it is
 * full again is the same as no bucket: such entries are swept once the map grows, each by its
 * own settings (a per-subject bucket may refill in a second while a per-tool one takes an hour:
 * swept by the other's time, an empty bucket would be full again at once). Bounded: a caller
 * naming a new tool on every call (names the catalog never held make buckets too, as the
 * limit is taken before the name is looked up) makes a bucket each, kept until full again, so
 * past `maxBuckets` the least recently used bucket goes: memory stays bounded
 * under such a flood, at the price of that bucket starting full again.
 */
export class MemoryBuckets {
  private readonly buckets = new Map<string, Entry>();
  private nextSweepAt = 0;

  /** @param now monotonic ms */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly sweepAbove = 10_000,
    private readonly maxBuckets = MAX_BUCKETS,
  ) {}

  take(key: string, settings: BucketSettings): BucketVerdict {
    const now = this.now();
    const held = this.buckets.get(key);
    const { state, verdict } = takeToken(held?.state, settings, now);
    // the Map's order is the order of use: the least recently used bucket comes first
    if (held !== undefined) this.buckets.delete(key);
    this.buckets.set(key, { state, settings });
    if (this.buckets.size > this.sweepAbove && now >= this.nextSweepAt) this.sweep(now);
    // (the sweep above runs on its own schedule: a flood must not cost a sweep per call)
    if (this.buckets.size > this.maxBuckets)
      for (const oldest of this.buckets.keys()) {
        if (this.buckets.size <= this.maxBuckets) break;
        this.buckets.delete(oldest);
      }
    return verdict;
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    let soonest = 10_000;
    for (const [key, { state, settings }] of this.buckets) {
      const full = refillMillis(settings);
      if (now - state.updatedAt >= full) this.buckets.delete(key);
      else soonest = Math.min(soonest, full);
    }
    this.nextSweepAt = now + soonest;
  }
}
