import type { UpstreamContribution } from '@app/registry';
import { LiveListCache } from './live-list-cache';

const contribution = { fingerprint: 'f' } as unknown as UpstreamContribution;

describe('live answers are cached per caller scope for their ttlMs (docs/operations.md §11 "Live lists")', () => {
  it('keeps an answer for its ttlMs and not a millisecond longer', () => {
    const cache = new LiveListCache();
    cache.set('k', { contribution, ttlMs: 1000, cacheScope: 'private' }, 100, 5000);
    expect(cache.get('k', 5999)?.contribution).toBe(contribution);
    expect(cache.get('k', 6000)).toBeUndefined();
  });

  it('keeps nothing for ttlMs 0 (or absent, read as 0)', () => {
    const cache = new LiveListCache();
    cache.set('k', { contribution, ttlMs: 0, cacheScope: 'public' }, 100, 0);
    expect(cache.get('k', 0)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('separates callers by access token and by every header the upstream is sent, and holds no token in the key', () => {
    const key = (token: string | undefined, headers: Record<string, string>) =>
      LiveListCache.key({ id: 'u' }, 'tools/list', token, headers);
    const anonymous = key(undefined, {});
    expect(key('alice', {})).not.toBe(anonymous);
    expect(key('alice', {})).not.toBe(key('bob', {}));
    expect(key(undefined, { 'x-tenant': 'a' })).not.toBe(key(undefined, { 'x-tenant': 'b' }));
    expect(key(undefined, { authorization: 'Bearer t1' })).not.toBe(
      key(undefined, { authorization: 'Bearer t2' }),
    );
    // header order does not matter; the method and upstream do
    expect(key('a', { x: '1', y: '2' })).toBe(key('a', { y: '2', x: '1' }));
    expect(LiveListCache.key({ id: 'u' }, 'prompts/list', 'a', {})).not.toBe(key('a', {}));
    // a server registered again under the id (docs/operations.md §15) is another source
    expect(LiveListCache.key({ id: 'u', registration: '1.1.1' }, 'tools/list', 'a', {})).not.toBe(
      LiveListCache.key({ id: 'u', registration: '9.9.2' }, 'tools/list', 'a', {}),
    );
    expect(LiveListCache.key({ id: 'u', registration: '1.1.1' }, 'tools/list', 'a', {})).not.toBe(
      key('a', {}),
    );
    expect(key(undefined, { authorization: 'Bearer secret-token' })).not.toContain('secret');
    // two tokens of one subject (another scope, an exchange for another audience) ask again
    expect(key('eyJ.alice-read', {})).not.toBe(key('eyJ.alice-admin', {}));
    expect(key('eyJ.alice-secret', {})).not.toContain('alice');
  });

  it('is bounded in bytes: the oldest answers go first past it, and one over a quarter of it is not kept', () => {
    const cache = new LiveListCache(1000);
    const hint = { contribution, ttlMs: 60_000, cacheScope: 'private' as const };
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, hint, 200, 0);
    // 2,000 bytes offered, 1,000 kept: the newest five
    expect(cache.size).toBe(5);
    expect(cache.get('k4', 1)).toBeUndefined();
    expect(cache.get('k5', 1)?.contribution).toBe(contribution);
    cache.set('big', hint, 251, 0);
    expect(cache.get('big', 1)).toBeUndefined();
    // an entry set again is counted once
    for (let i = 0; i < 10; i++) cache.set('k9', hint, 200, 0);
    expect(cache.size).toBe(5);
  });
});
