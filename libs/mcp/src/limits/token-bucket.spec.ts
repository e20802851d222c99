import { MemoryBuckets } from './memory-buckets';
import { takeToken, type BucketState } from './token-bucket';

const SETTINGS = { capacity: 3, refillPerSecond: 2 };

describe('token bucket (docs/operations.md §14 "Rate limits per caller")', () => {
  it('a new bucket admits a burst of `capacity` requests, then refuses with the wait until a token is back', () => {
    let state: BucketState | undefined;
    const verdicts = [];
    for (let i = 0; i < 4; i++) {
      const taken = takeToken(state, SETTINGS, 1000);
      state = taken.state;
      verdicts.push(taken.verdict);
    }
    expect(verdicts.slice(0, 3)).toEqual([
      { admitted: true },
      { admitted: true },
      { admitted: true },
    ]);
    // 2 tokens per second: one is back after 500 ms
    expect(verdicts[3]).toEqual({ admitted: false, retryAfterMs: 500 });
  });

  it('refills at refillPerSecond and never above capacity', () => {
    const empty: BucketState = { tokens: 0, updatedAt: 0 };
    // 250 ms in: half a token back, the other half 250 ms away
    expect(takeToken(empty, SETTINGS, 250).verdict).toEqual({ admitted: false, retryAfterMs: 250 });
    expect(takeToken({ tokens: 0, updatedAt: 0 }, SETTINGS, 500).verdict).toEqual({
      admitted: true,
    });
    expect(takeToken({ tokens: 0, updatedAt: 0 }, SETTINGS, 3_600_000).state.tokens).toBe(2);
  });

  it('a clock that goes back does not add tokens', () => {
    expect(takeToken({ tokens: 0.5, updatedAt: 1000 }, SETTINGS, 0).verdict).toEqual({
      admitted: false,
      retryAfterMs: 250,
    });
  });

  it('MemoryBuckets keeps one bucket per key', () => {
    const now = 0;
    const buckets = new MemoryBuckets(() => now);
    const one = { capacity: 1, refillPerSecond: 1 };
    expect(buckets.take('alice', one).admitted).toBe(true);
    expect(buckets.take('alice', one).admitted).toBe(false);
    expect(buckets.take('bob', one).admitted).toBe(true);
  });

  it('MemoryBuckets forgets buckets that are full again once it grows', () => {
    let now = 0;
    const buckets = new MemoryBuckets(() => now, 10);
    const one = { capacity: 1, refillPerSecond: 1 };
    for (let i = 0; i < 10; i++) buckets.take(`k${i}`, one);
    now = 5000;
    buckets.take('late', one);
    expect(buckets.size).toBe(1);
    expect(buckets.take('k0', one).admitted).toBe(true);
  });
});
