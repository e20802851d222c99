import { MemoryBuckets } from './memory-buckets';
import { toolKey } from './caller-limits.service';

describe('MemoryBuckets: in-process token buckets', () => {
  it('sweeps each bucket by its own settings: an empty slow bucket survives a sweep started by a fast one', () => {
    let now = 0;
    const buckets = new MemoryBuckets(() => now, 2);
    const slow = { capacity: 1, refillPerSecond: 0.001 }; // full again after 1,000 s
    const fast = { capacity: 100, refillPerSecond: 100 }; // full again after 1 s
    expect(buckets.take('t:alice:calc__add', slow).admitted).toBe(true);
    expect(buckets.take('t:alice:calc__add', slow).admitted).toBe(false);
    now = 11_000;
    // three fast buckets pass the sweep threshold; the sweep runs with the fast settings
    for (const key of ['s:a', 's:b', 's:c']) buckets.take(key, fast);
    now = 22_000;
    buckets.take('s:d', fast);
    expect(buckets.take('t:alice:calc__add', slow).admitted).toBe(false);
  });

  it('forgets a bucket once it is full again', () => {
    let now = 0;
    const buckets = new MemoryBuckets(() => now, 1);
    const fast = { capacity: 1, refillPerSecond: 1 };
    buckets.take('a', fast);
    now = 5_000;
    buckets.take('b', fast);
    expect(buckets.size).toBe(1);
  });
});

describe('MemoryBuckets: bounded', () => {
  const slow = { capacity: 1, refillPerSecond: 0.0001 }; // full again after hours

  it("a caller naming a new tool on every call holds its share at most, and never resets another caller's bucket", () => {
    let now = 0;
    const buckets = new MemoryBuckets(() => now, 10, 1000, 100);
    expect(buckets.take('t:bob:calc__add', slow, 'bob').admitted).toBe(true);
    expect(buckets.take('t:mallory:calc__add', slow, 'mallory').admitted).toBe(true);
    for (let i = 0; i < 10_000; i++) {
      now += 1;
      buckets.take(`t:mallory:x${i}`, slow, 'mallory');
    }
    expect(buckets.size).toBeLessThanOrEqual(102);
    // the flood gave back nothing that was taken: bob's bucket and mallory's own stay empty
    expect(buckets.take('t:bob:calc__add', slow, 'bob').admitted).toBe(false);
    expect(buckets.take('t:mallory:calc__add', slow, 'mallory').admitted).toBe(false);
    // past her share, her new names share one bucket: limited as one
    expect(buckets.take('t:mallory:another', slow, 'mallory').admitted).toBe(false);
  });

  it('keeps at most maxBuckets in all (very many callers): the least recently used go, the buckets in use stay', () => {
    let now = 0;
    const buckets = new MemoryBuckets(() => now, 10, 100, 100);
    expect(buckets.take('t:alice:calc__add', slow, 'alice').admitted).toBe(true);
    for (let i = 0; i < 10_000; i++) {
      now += 1;
      buckets.take(`t:caller${i}:x`, slow, `caller${i}`);
      // alice keeps using hers: it is never the least recently used
      if (i % 50 === 0)
        expect(buckets.take('t:alice:calc__add', slow, 'alice').admitted).toBe(false);
    }
    expect(buckets.size).toBeLessThanOrEqual(100);
  });
});

describe('toolKey: a tool name as a bucket key part', () => {
  it('keeps a tool name as written, and a name past 256 characters as its digest (a few bytes, however long)', () => {
    expect(toolKey('calc__add')).toBe('calc__add');
    expect(toolKey('a/b c')).toBe('a%2Fb%20c');
    const long = toolKey('x'.repeat(1024 * 1024));
    expect(long.length).toBeLessThan(64);
    expect(long).not.toBe(toolKey(`${'x'.repeat(1024 * 1024 - 1)}y`));
  });
});
