import type { BundleDefinition } from '@app/config';
import type { PublishedTool } from '../manifest/manifest.types';
import { CatalogSnapshot, diffCatalogs } from './catalog-snapshot';
import type { CatalogTool } from './catalog-tool';

const BUNDLE: BundleDefinition = {
  id: 'r',
  manifestUrl: 'http://r.svc/tool-manifest',
  baseEndpoint: 'http://r.svc/mcp',
  namePrefix: 'r.',
  enabled: true,
  authorization: { mode: 'none' },
  serverErrorBody: 'show',
};

function entry(
  name: string,
  over: { published?: Partial<PublishedTool>; version?: string; timeoutMillis?: number } = {},
): CatalogTool {
  const published = {
    name,
    description: `Runs ${name} — "quoted" \u00e9`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    ...over.published,
  };
  const publishedJson = JSON.stringify(published);
  return {
    name,
    sourceId: 'r',
    route: { kind: 'bundle', bundle: BUNDLE },
    timeoutMillis: over.timeoutMillis ?? 30_000,
    version: over.version ?? '1',
    publishedJson,
    // what validateManifest computes: the entry text and the version
    fingerprint: `${publishedJson}|${over.version ?? '1'}`,
  };
}

const AT = new Date('2026-07-30T00:00:00.000Z');

function build(tools: CatalogTool[], key = 'k'): Promise<CatalogSnapshot> {
  return CatalogSnapshot.build(tools, key, AT);
}

describe('CatalogSnapshot: tools/list bytes serialized once per snapshot', () => {
  it('toolsJson equals JSON.stringify of the published entries, in order', async () => {
    const tools = [
      entry('r.b', { published: { title: 'B', annotations: { readOnlyHint: true } } }),
      entry('r.a'),
    ];
    const snapshot = await build(tools);
    expect(snapshot.toolsJson).toBe(`[${tools.map((t) => t.publishedJson).join(',')}]`);
    expect(JSON.parse(snapshot.toolsJson)).toEqual(tools.map((t) => JSON.parse(t.publishedJson)));
    expect(snapshot.toolsJsonBytes.toString('utf8')).toBe(snapshot.toolsJson);
  });

  it('toolsJson never holds a route, version, timeout or _meta', async () => {
    const snapshot = await build([entry('r.a', { version: 'v-secret', timeoutMillis: 1234 })]);
    expect(snapshot.toolsJson).not.toContain('r.svc');
    expect(snapshot.toolsJson).not.toContain('v-secret');
    expect(snapshot.toolsJson).not.toContain('1234');
    expect(snapshot.toolsJson).not.toContain('_meta');
  });

  it('an empty catalog serializes to []', async () => {
    const snapshot = await build([]);
    expect(snapshot.toolsJson).toBe('[]');
    expect(snapshot.toolCount).toBe(0);
  });

  it('get() finds a listed tool by its published name, and nothing else', async () => {
    const a = entry('r.a');
    const snapshot = await build([a, entry('r.b')]);
    expect(snapshot.get('r.a')).toBe(a);
    expect(snapshot.get('r.c')).toBeUndefined();
    expect(snapshot.get('R.A')).toBeUndefined();
    expect(snapshot.toolCount).toBe(2);
  });

  it('keeps the content key and publication time it was built with', async () => {
    const snapshot = await build([entry('r.a')], 'r:fp1');
    expect(snapshot.contentKey).toBe('r:fp1');
    expect(snapshot.publishedAt.toISOString()).toBe('2026-07-30T00:00:00.000Z');
  });
});

describe('diffCatalogs: added, removed and changed tools for the catalog-change log', () => {
  it('reports every tool as added when there was no previous catalog', async () => {
    expect(await diffCatalogs(undefined, await build([entry('r.a'), entry('r.b')]))).toEqual({
      added: ['r.a', 'r.b'],
      removed: [],
      changed: [],
    });
  });

  it('reports nothing for an equal catalog', async () => {
    const before = await build([entry('r.a'), entry('r.b')]);
    const after = await build([entry('r.a'), entry('r.b')]);
    expect(await diffCatalogs(before, after)).toEqual({ added: [], removed: [], changed: [] });
  });

  it('reports added and removed tools', async () => {
    const before = await build([entry('r.a'), entry('r.b')]);
    const after = await build([entry('r.b'), entry('r.c')]);
    expect(await diffCatalogs(before, after)).toEqual({
      added: ['r.c'],
      removed: ['r.a'],
      changed: [],
    });
  });

  it.each([
    [
      'a changed schema',
      entry('r.a', {
        published: { inputSchema: { type: 'object', properties: { q: { type: 'integer' } } } },
      }),
    ],
    ['a changed description', entry('r.a', { published: { description: 'Other text.' } })],
    ['a changed version', entry('r.a', { version: '2' })],
    ['a changed timeout', entry('r.a', { timeoutMillis: 500 })],
  ])('counts %s as changed', async (_label, changedEntry) => {
    const before = await build([entry('r.a'), entry('r.b')]);
    const after = await build([changedEntry, entry('r.b')]);
    expect(await diffCatalogs(before, after)).toEqual({ added: [], removed: [], changed: ['r.a'] });
  });
});
