import {
  refillMillis,
  takeToken,
  type BucketSettings,
  type BucketState,
  type BucketVerdict,
} from './token-bucket';

/** A bucket, and the settings it is kept by (how long it takes to be full again untouched). */
interface Entry {
  readonly state: BucketState;
  readonly settings: BucketSettings;
}

/**
 * Token buckets in this process (one replica's own count). A bucket left alone until it is
 * full again is the same as no bucket: such entries are swept once the map grows, each by its
 * own settings (a per-subject bucket may refill in a second while a per-tool one takes an hour:
 * swept by the other's time, an empty bucket would be full again at once).
 */
export class MemoryBuckets {
  private readonly buckets = new Map<string, Entry>();
  private nextSweepAt = 0;

  /** @param now monotonic ms */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly sweepAbove = 10_000,
  ) {}

  take(key: string, settings: BucketSettings): BucketVerdict {
    const now = this.now();
    const { state, verdict } = takeToken(this.buckets.get(key)?.state, settings, now);
    this.buckets.set(key, { state, settings });
    if (this.buckets.size > this.sweepAbove && now >= this.nextSweepAt) this.sweep(now);
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
