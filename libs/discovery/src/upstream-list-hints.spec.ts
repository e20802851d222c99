import { addPageHints } from './upstream-list-puller.service';

describe('the cache hints of an upstream list over its pages (wire notes §3)', () => {
  it('page 1 gives its own hints; a negative ttl counts as 0; garbage is absent', () => {
    expect(addPageHints(undefined, { ttlMs: 60_000, cacheScope: 'public' }, true)).toEqual({
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    expect(addPageHints(undefined, { ttlMs: -5, cacheScope: 'private' }, true)).toEqual({
      ttlMs: 0,
      cacheScope: 'private',
    });
    expect(addPageHints(undefined, { ttlMs: '60', cacheScope: 'shared' }, true)).toEqual({
      ttlMs: undefined,
      cacheScope: undefined,
    });
  });

  it('later pages: the smallest ttl, private over public, and a member any page omits stays absent', () => {
    const first = addPageHints(undefined, { ttlMs: 60_000, cacheScope: 'public' }, true);
    expect(addPageHints(first, { ttlMs: 30_000, cacheScope: 'private' }, false)).toEqual({
      ttlMs: 30_000,
      cacheScope: 'private',
    });
    expect(addPageHints(first, {}, false)).toEqual({ ttlMs: undefined, cacheScope: undefined });
  });
});
