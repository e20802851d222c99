import type { CallerAccess } from '@app/identity';
import type { CatalogSnapshot, CatalogTool } from '@app/registry';
import { callerListJson } from './caller-lists';
import { mergedExtensions, toolsJsonWithoutAppTools } from './client-extensions';

type Restricted = Extract<CallerAccess, { all: false }>;

function tool(name: string): CatalogTool {
  return {
    name,
    sourceId: 'docs',
    publishedJson: JSON.stringify({ name, inputSchema: { type: 'object' } }),
  } as unknown as CatalogTool;
}

function catalog(names: string[]): CatalogSnapshot {
  return {
    tools: names.map(tool),
    extras: { listed: () => ({ prompts: [], resources: [], resourceTemplates: [] }) },
  } as unknown as CatalogSnapshot;
}

/** A tag-based virtual server's view: the tools granted by name, narrowed for one catalog. */
function view(names: string[], resolvedFor: CatalogSnapshot): Restricted {
  return {
    all: false,
    key: 'server:tagged|grant',
    sources: new Set(),
    tools: new Set(names),
    resolvedFor,
  } as unknown as Restricted;
}

const names = (json: string): string[] =>
  (JSON.parse(json) as { name: string }[]).map((t) => t.name);

/**
 * What is built per grant key and catalog (docs/operations.md §16 "Open streams end with their
 * view"): a grant narrowed to a view of another catalog (a stream opened before a publication)
 * is served what it holds, but never kept under its key for the new catalog, where the key
 * names the new view.
 */
describe('per-grant caches and views narrowed for another catalog', () => {
  for (const [what, build] of [
    ['callerListJson', (c: CatalogSnapshot, a: Restricted) => callerListJson(c, 'tools', a)],
    ['toolsJsonWithoutAppTools', toolsJsonWithoutAppTools],
  ] as const)
    it(`${what}: a stale view does not fill the cache of the new catalog`, () => {
      const before = catalog(['docs.a', 'docs.b']);
      const after = catalog(['docs.a', 'docs.b']);
      // the tag moved from docs.b to docs.a with the new catalog
      const stale = view(['docs.b'], before);
      const fresh = view(['docs.a'], after);
      expect(names(build(after, stale))).toEqual(['docs.b']);
      expect(names(build(after, fresh))).toEqual(['docs.a']);
    });

  it('mergedExtensions: a stale view does not fill the cache of the new catalog', () => {
    const upstreams = (): Map<string, object> =>
      new Map([
        ['ua', { upstream: { id: 'ua' }, capabilities: { extensions: { 'x/a': {} } } }],
        ['ub', { upstream: { id: 'ub' }, capabilities: { extensions: { 'x/b': {} } } }],
      ]);
    const at = (): CatalogSnapshot =>
      ({ tools: [], extras: { upstreams: upstreams() } }) as unknown as CatalogSnapshot;
    const [before, after] = [at(), at()];
    const sourced = (source: string, resolvedFor: CatalogSnapshot): Restricted => ({
      ...view([], resolvedFor),
      sources: new Set([source]),
    });
    expect(Object.keys(mergedExtensions(after, sourced('ub', before)) ?? {})).toEqual(['x/b']);
    expect(Object.keys(mergedExtensions(after, sourced('ua', after)) ?? {})).toEqual(['x/a']);
  });
});
