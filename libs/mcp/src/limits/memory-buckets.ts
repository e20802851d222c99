import {
  refillMillis,
  takeToken,
  type BucketSettings,
  type BucketState,
  type BucketVerdict,
} from './token-bucket';

/**
 * Token buckets in this process (one replica's own count). A bucket left alone until it is
 * full again is the same as no bucket: such entries are swept once the map grows.
 */
export class MemoryBuckets {
  private readonly buckets = new Map<string, BucketState>();
  private nextSweepAt = 0;

  /** @param now monotonic ms */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly sweepAbove = 10_000,
  ) {}

  take(key: string, settings: BucketSettings): BucketVerdict {
    const now = this.now();
    const { state, verdict } = takeToken(this.buckets.get(key), settings, now);
    this.buckets.set(key, state);
    if (this.buckets.size > this.sweepAbove && now >= this.nextSweepAt) this.sweep(now, settings);
    return verdict;
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number, settings: BucketSettings): void {
    const full = refillMillis(settings);
    for (const [key, state] of this.buckets)
      if (now - state.updatedAt >= full) this.buckets.delete(key);
    this.nextSweepAt = now + Math.min(full, 10_000);
  }
}
