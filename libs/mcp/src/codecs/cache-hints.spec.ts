import type { UpstreamDefinition } from '@app/config';
import type { UpstreamContribution } from '@app/registry';
import { upstreamHints } from './cache-hints';

const definition = (extra: Partial<UpstreamDefinition> = {}): UpstreamDefinition =>
  ({ id: 'u', ...extra }) as UpstreamDefinition;
const contribution = (
  hints: UpstreamContribution['hints'],
  extra: Partial<UpstreamDefinition> = {},
): Pick<UpstreamContribution, 'hints' | 'upstream'> => ({ hints, upstream: definition(extra) });

describe('what one upstream contributes to cache hints (issue 11 §3, wire notes §3)', () => {
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
