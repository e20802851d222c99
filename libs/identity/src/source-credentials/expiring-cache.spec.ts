import { ExpiringCache } from './expiring-cache';
import { refreshMarginMs } from './source-credentials.service';

describe('ExpiringCache: exchanged tokens cached until shortly before expiry (docs/operations.md §14 "Credentials towards sources")', () => {
  it('shares one fetch between concurrent callers of a key (single flight)', async () => {
    const cache = new ExpiringCache<string>(() => 0);
    let fetches = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fetch = async (): Promise<{ value: string; refreshAt: number }> => {
      fetches += 1;
      await gate;
      return { value: `v${fetches}`, refreshAt: 1000 };
    };
    const both = Promise.all([cache.get('k', fetch), cache.get('k', fetch)]);
    release();
    expect(await both).toEqual(['v1', 'v1']);
    expect(fetches).toBe(1);
  });

  it('serves the value until refreshAt, then fetches again', async () => {
    let now = 0;
    const cache = new ExpiringCache<number>(() => now);
    let n = 0;
    const fetch = (): Promise<{ value: number; refreshAt: number }> =>
      Promise.resolve({ value: ++n, refreshAt: now + 100 });
    expect(await cache.get('k', fetch)).toBe(1);
    now = 99;
    expect(await cache.get('k', fetch)).toBe(1);
    now = 100;
    expect(await cache.get('k', fetch)).toBe(2);
  });

  it('does not cache a failure: the next caller asks again', async () => {
    const cache = new ExpiringCache<string>(() => 0);
    await expect(cache.get('k', () => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    await expect(
      cache.get('k', () => Promise.resolve({ value: 'ok', refreshAt: 10 })),
    ).resolves.toBe('ok');
  });

  it('stays within maxEntries, dropping expired entries first, then the oldest', async () => {
    let now = 0;
    const cache = new ExpiringCache<string>(() => now, 3);
    const put = (key: string, refreshAt: number): Promise<string> =>
      cache.get(key, () => Promise.resolve({ value: key, refreshAt }));
    await put('a', 10);
    await put('b', 1000);
    await put('c', 1000);
    now = 20; // a expired
    await put('d', 1000);
    expect(cache.size).toBe(3);
    await put('e', 1000); // full of live entries: the oldest (b) goes
    expect(cache.size).toBe(3);
    let refetched = false;
    await cache.get('b', () => {
      refetched = true;
      return Promise.resolve({ value: 'b2', refreshAt: 1000 });
    });
    expect(refetched).toBe(true);
  });

  it('refreshes 30 s before expiry, or a tenth of a short lifetime', () => {
    expect(refreshMarginMs(3_600_000)).toBe(30_000);
    expect(refreshMarginMs(60_000)).toBe(6_000);
  });
});
