import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import type { CatalogRefresh } from '@app/registry';
import type { RegistryService, UpstreamContribution } from '@app/registry';
import { CacheHintsService, upstreamHints } from './cache-hints';

const definition = (extra: Partial<UpstreamDefinition> = {}): UpstreamDefinition =>
  ({ id: 'u', ...extra }) as UpstreamDefinition;
const contribution = (
  hints: UpstreamContribution['hints'],
  extra: Partial<UpstreamDefinition> = {},
): Pick<UpstreamContribution, 'hints' | 'upstream'> => ({ hints, upstream: definition(extra) });

describe('what one upstream contributes to cache hints (docs/operations.md §11 "Cache hints"; wire notes §3)', () => {
  it('a 2026 upstream: the ttlMs and scope its list carried', () => {
    expect(
      upstreamHints(contribution({ tools: { ttlMs: 60_000, cacheScope: 'public' } }), ['tools']),
    ).toEqual({ ttlMs: 60_000, cacheScope: 'public' });
  });

  it('a 2025 upstream (no hints): 0 and private, unless configured', () => {
    expect(upstreamHints(contribution({}), ['tools'])).toEqual({ ttlMs: 0, cacheScope: 'private' });
    expect(
      upstreamHints(contribution({}, { cacheTtlMillis: 45_000, cacheScope: 'public' }), ['tools']),
    ).toEqual({ ttlMs: 45_000, cacheScope: 'public' });
  });

  it('an omitted scope is private, an omitted ttl is 0 (or the configured value)', () => {
    expect(upstreamHints(contribution({ tools: { ttlMs: 60_000 } }), ['tools'])).toEqual({
      ttlMs: 60_000,
      cacheScope: 'private',
    });
    expect(
      upstreamHints(contribution({ tools: { cacheScope: 'public' } }, { cacheTtlMillis: 5 }), [
        'tools',
      ]),
    ).toEqual({ ttlMs: 5, cacheScope: 'public' });
  });

  it('over several lists (server/discover): the smallest ttl, private if any list is', () => {
    expect(
      upstreamHints(
        contribution({
          tools: { ttlMs: 60_000, cacheScope: 'public' },
          prompts: { ttlMs: 30_000, cacheScope: 'private' },
        }),
        ['tools', 'resources', 'resourceTemplates', 'prompts'],
      ),
    ).toEqual({ ttlMs: 30_000, cacheScope: 'private' });
  });
});

describe('CacheHintsService: the merged hints of a list (docs/operations.md §11 "Cache hints")', () => {
  const service = (
    contributions: Pick<UpstreamContribution, 'hints' | 'upstream' | 'capabilities'>[],
    bundles = true,
    msUntilNextRefresh = 50_000,
  ): CacheHintsService =>
    new CacheHintsService(
      {
        mcp: { cache: { maxTtlMillis: 60_000 }, registry: { refreshIntervalSeconds: 300 } },
        bundles: bundles ? [{ enabled: true }] : [],
      } as unknown as GatewayConfig,
      {
        current: () => ({ extras: { upstreams: new Map(contributions.map((c, i) => [i, c])) } }),
      } as unknown as RegistryService,
      { msUntilNextRefresh: () => msUntilNextRefresh } as unknown as CatalogRefresh,
    );
  const v2 = (ttlMs: number, cacheScope: 'public' | 'private') => ({
    hints: { tools: { ttlMs, cacheScope } },
    upstream: definition(),
    capabilities: { tools: {} },
  });

  it('the minimum over a bundle (time to its next pull) and the upstreams, capped', () => {
    expect(service([v2(90_000, 'public'), v2(30_000, 'public')]).forList('tools/list')).toEqual({
      ttlMs: 30_000,
      cacheScope: 'public',
    });
    expect(service([v2(90_000, 'public')], true, 12_345).forList('tools/list')).toEqual({
      ttlMs: 12_345,
      cacheScope: 'public',
    });
    expect(service([v2(90_000, 'public')], false).forList('tools/list').ttlMs).toBe(60_000);
  });

  it('private wins: one private contributor, or a result filtered for the caller', () => {
    expect(service([v2(60_000, 'public'), v2(30_000, 'private')]).forList('tools/list')).toEqual({
      ttlMs: 30_000,
      cacheScope: 'private',
    });
    expect(
      service([v2(60_000, 'public')]).forList('tools/list', { filteredForCaller: true }).cacheScope,
    ).toBe('private');
  });

  it('only sources offering the list contribute; none at all is 0 and private', () => {
    expect(service([v2(10, 'private')], false).forList('prompts/list')).toEqual({
      ttlMs: 0,
      cacheScope: 'private',
    });
    expect(service([v2(10, 'private')], true).forList('prompts/list')).toEqual({
      ttlMs: 0,
      cacheScope: 'private',
    });
  });

  it('resources/read keeps its upstream hints, capped; absent ones are 0 and private', () => {
    const s = service([]);
    expect(s.forRead({ ttlMs: 90_000, cacheScope: 'public' })).toEqual({
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    expect(s.forRead({})).toEqual({ ttlMs: 0, cacheScope: 'private' });
  });
});
