import type { UpstreamDefinition } from '@app/config';
import { CatalogExtras } from '../catalog/catalog-extras';
import { CatalogSnapshot } from '../catalog/catalog-snapshot';
import type { CatalogTool } from '../catalog/catalog-tool';
import { SchemaChecker } from '../manifest/schema-checker';
import { LiveListMerger, type LiveListAnswer } from './live-lists';
import { acceptUpstreamLists, type UpstreamContribution } from './upstream-contribution';

function upstream(
  id: string,
  namePrefix = `${id}__`,
  lists: 'live' | 'snapshot' = 'live',
): UpstreamDefinition {
  return {
    id,
    url: `http://${id}.internal/mcp`,
    namePrefix,
    enabled: true,
    protocol: 'auto',
    lists,
    connectMillis: 100,
    listMillis: 1000,
    callMillis: 5000,
    forwardHeaders: [],
    authorization: { mode: 'none' },
  };
}

const schema = { type: 'object', properties: {} };

function bundleTool(sourceId: string, name: string): CatalogTool {
  const publishedJson = JSON.stringify({ name, inputSchema: schema });
  return {
    name,
    sourceId,
    route: {
      kind: 'bundle',
      bundle: {} as never,
    },
    timeoutMillis: 1000,
    version: '1',
    publishedJson,
    fingerprint: name,
  };
}

function answer(up: UpstreamDefinition, items: Record<string, unknown>[]): LiveListAnswer {
  return { upstream: up, era: '2026', capabilities: { tools: {}, prompts: {} }, items };
}

const names = (json: string): string[] =>
  (JSON.parse(json) as { name: string }[]).map((t) => t.name);

describe('live lists merge by the catalog rules (docs/operations.md §11 "Live lists")', () => {
  it('puts live tools among the snapshot tools in (sourceId, name) order, names prefixed as in a pull', async () => {
    const catalog = await CatalogSnapshot.build(
      [bundleTool('bank', 'bank.pay'), bundleTool('zoo', 'zoo.feed')],
      'k',
      new Date(0),
    );
    const merger = new LiveListMerger();
    const m = upstream('m');
    const a = upstream('a');
    const live = [
      await merger.accept(
        'tools',
        answer(m, [
          { name: 'z.last', inputSchema: schema },
          { name: 'first', inputSchema: schema },
        ]),
      ),
      await merger.accept('tools', answer(a, [{ name: 'only', inputSchema: schema }])),
    ];
    const merged = await merger.merge(catalog, 'tools', live, ['a', 'm']);
    expect(names(merged.json)).toEqual([
      'a__only',
      'bank.pay',
      'm__first',
      'm__z_last',
      'zoo.feed',
    ]);
    expect(merged.skipped).toEqual([]);
  });

  it('leaves out a live tool the MCP rules refuse, as a pull would, and keeps the rest', async () => {
    const merger = new LiveListMerger();
    const c = await merger.accept(
      'tools',
      answer(upstream('x'), [
        { name: 'bad', inputSchema: { type: 'string' } },
        { name: 'ok', inputSchema: schema },
      ]),
    );
    expect(c.tools.map((t) => t.name)).toEqual(['x__ok']);
    expect(c.leftOut).toEqual([
      { list: 'tools', name: 'bad', reason: 'inputSchema must have type "object" at its root' },
    ]);
    expect(c.tools[0]?.route).toMatchObject({ kind: 'upstream', originalName: 'ok' });
  });

  it('a name two sources publish skips the live sources involved, never picking a winner (contract §7.6)', async () => {
    // prefix "" makes a clash possible (config allows it only for a sole source; the rule still holds)
    const catalog = await CatalogSnapshot.build([bundleTool('bank', 'pay')], 'k', new Date(0));
    const merger = new LiveListMerger();
    const bare = upstream('bare', '');
    const other = upstream('other');
    const merged = await merger.merge(
      catalog,
      'tools',
      [
        await merger.accept('tools', answer(bare, [{ name: 'pay', inputSchema: schema }])),
        await merger.accept('tools', answer(other, [{ name: 'x', inputSchema: schema }])),
      ],
      ['bare', 'other'],
    );
    expect(names(merged.json)).toEqual(['pay', 'other__x']);
    expect(merged.skipped.map((s) => s.id)).toEqual(['bare']);
    expect(merged.skipped[0]?.reason).toMatch(/"pay" \(bank, bare\)/);
  });

  it('prompts merge with the snapshot upstreams by CatalogExtras (sorted by source, first name wins)', async () => {
    const schemas = new SchemaChecker();
    const snap = upstream('snap', 'snap__', 'snapshot');
    const snapContribution = acceptUpstreamLists(
      snap,
      {
        era: '2025',
        capabilities: { prompts: {} },
        tools: [],
        resources: [],
        resourceTemplates: [],
        prompts: [{ name: 'review' }],
      },
      schemas,
    );
    const catalog = await CatalogSnapshot.build(
      [],
      'k',
      new Date(0),
      {},
      CatalogExtras.build([snapContribution], false),
    );
    const merger = new LiveListMerger();
    const live = await merger.accept('prompts', answer(upstream('a'), [{ name: 'brief' }]));
    const merged = await merger.merge(catalog, 'prompts', [live], ['snap', 'a']);
    expect(names(merged.json)).toEqual(['a__brief', 'snap__review']);
  });

  it("resources: a live upstream's catalog copy keeps the URIs its templates cover out of a later source's entries, for every caller; registered sources are merged too", async () => {
    const schemas = new SchemaChecker();
    const lists = (
      resources: Record<string, unknown>[],
      resourceTemplates: Record<string, unknown>[] = [],
    ) => ({
      era: '2025' as const,
      capabilities: { resources: {} },
      tools: [],
      prompts: [],
      resources,
      resourceTemplates,
    });
    const tpl = upstream('tpl');
    // its scheduled pull: the template the gateway is answered (docs/operations.md §11)
    const copy = acceptUpstreamLists(
      tpl,
      lists([], [{ uriTemplate: 'tpl://{x}', name: 'any' }]),
      schemas,
    );
    const hj = acceptUpstreamLists(
      upstream('hj', 'hj__', 'snapshot'),
      lists([
        { uri: 'tpl://victim', name: 'stolen' },
        { uri: 'hj://own', name: 'own' },
      ]),
      schemas,
    );
    // registered at runtime: after every configured source, in no config order
    const reg = acceptUpstreamLists(
      upstream('reg', 'reg__', 'snapshot'),
      lists([{ uri: 'reg://own', name: 'own' }]),
      schemas,
    );
    const catalog = await CatalogSnapshot.build(
      [],
      'k',
      new Date(0),
      {},
      CatalogExtras.build([copy, hj, reg], false),
    );
    const merger = new LiveListMerger();
    const live = await merger.accept('resources', {
      upstream: tpl,
      era: '2025',
      capabilities: { resources: {} },
      items: [{ uri: 'tpl://mine', name: 'mine' }],
    });
    const uris = (json: string): string[] =>
      (JSON.parse(json) as { uri: string }[]).map((r) => r.uri);
    const merged = await merger.merge(catalog, 'resources', [live], ['tpl', 'hj']);
    expect(uris(merged.json)).toEqual(['tpl://mine', 'hj://own', 'reg://own']);
    // its live fetch failed: nothing of it listed, its copy still covers
    const failed = await merger.merge(catalog, 'resources', [], ['tpl', 'hj']);
    expect(uris(failed.json)).toEqual(['hj://own', 'reg://own']);
    // a caller who may not see tpl still does not get hj's entry resources/read never reaches
    const restricted = await merger.merge(catalog, 'resources', [live], ['tpl', 'hj'], {
      tool: () => true,
      source: (id) => id !== 'tpl',
    });
    expect(uris(restricted.json)).toEqual(['hj://own', 'reg://own']);
  });
});

describe('a live list pays for what it holds (docs/operations.md §11 "Live lists")', () => {
  const schemas = new SchemaChecker();
  const lists = (
    resources: Record<string, unknown>[],
    resourceTemplates: Record<string, unknown>[] = [],
  ) => ({
    era: '2025' as const,
    capabilities: { resources: {}, prompts: {} },
    tools: [],
    prompts: [{ name: 'review' }],
    resources,
    resourceTemplates,
  });

  /** A catalog whose sources have 2,000 templates and 2,000 resources for coverage to test. */
  async function bigCatalog(more: readonly UpstreamContribution[] = []) {
    const n = 2000;
    const tpl = acceptUpstreamLists(
      upstream('tpl', 'tpl__', 'snapshot'),
      lists(
        [],
        Array.from({ length: n }, (_, i) => ({ uriTemplate: `t${i}://{x}`, name: 't' })),
      ),
      schemas,
    );
    const res = acceptUpstreamLists(
      upstream('res', 'res__', 'snapshot'),
      lists(Array.from({ length: n }, (_, i) => ({ uri: `t${i}://item`, name: 'r' }))),
      schemas,
    );
    return CatalogSnapshot.build(
      [],
      'k',
      new Date(0),
      {},
      CatalogExtras.build([tpl, res, ...more], false),
    );
  }

  it('prompts/list and resources/templates/list run no resource coverage', async () => {
    const catalog = await bigCatalog();
    const merger = new LiveListMerger();
    const order = ['tpl', 'res', 'a'];
    const prompts = await merger.accept('prompts', answer(upstream('a'), [{ name: 'brief' }]));
    const merged = await merger.merge(catalog, 'prompts', [prompts], order);
    expect(names(merged.json)).toEqual(['a__brief', 'res__review', 'tpl__review']);
    const templates = await merger.accept('resourceTemplates', {
      upstream: upstream('a'),
      era: '2025',
      capabilities: { resources: {} },
      items: [{ uriTemplate: 'a://{x}', name: 'a' }],
    });
    const listed = await merger.merge(catalog, 'resourceTemplates', [templates], order, {
      tool: () => true,
      source: (id) => id === 'a',
    });
    expect(JSON.parse(listed.json)).toEqual([{ uriTemplate: 'a://{x}', name: 'a' }]);
    expect(merger.coverageTests).toBe(0);
  });

  it('resources/list builds its claims once per catalog and set of live answers', async () => {
    // one definition, as a running gateway has (a new one would be another upstream)
    const a = upstream('a');
    // its catalog copy (the gateway's own pull) lists a://mine: reads of it route to a
    const catalog = await bigCatalog([
      acceptUpstreamLists(a, lists([{ uri: 'a://mine', name: 'a' }]), schemas),
    ]);
    const merger = new LiveListMerger();
    const order = ['tpl', 'res', 'a'];
    const resources = (uri: string) =>
      merger.accept('resources', {
        upstream: a,
        era: '2025',
        capabilities: { resources: {} },
        items: [{ uri, name: 'a' }],
      });
    const uris = (json: string): string[] =>
      (JSON.parse(json) as { uri: string }[]).map((r) => r.uri);
    const first = await merger.merge(catalog, 'resources', [await resources('t1://mine')], order);
    // a:// is after tpl in the order: t1://mine is tpl's, by its template t1://{x}
    expect(uris(first.json)).not.toContain('t1://mine');
    const built = merger.coverageTests;
    expect(built).toBeGreaterThan(0);
    // the same answer again, for another caller too: no template tested
    for (let i = 0; i < 10; i++) {
      await merger.merge(catalog, 'resources', [await resources('t1://mine')], order);
      await merger.merge(catalog, 'resources', [await resources('t1://mine')], order, {
        tool: () => true,
        source: (id) => id === 'a',
      });
    }
    expect(merger.coverageTests).toBe(built);
    // a changed answer is built anew
    const changed = await merger.merge(catalog, 'resources', [await resources('a://mine')], order);
    expect(uris(changed.json)).toContain('a://mine');
    expect(merger.coverageTests).toBeGreaterThan(built);
  });
});

describe('an unchanged live answer reuses its accepted contribution (docs/operations.md §11 "Live lists")', () => {
  const good = (name: string): Record<string, unknown> => ({ name, inputSchema: schema });

  it('gives the same contribution, left-out entries included, for an equal answer', async () => {
    const merger = new LiveListMerger();
    const up = upstream('u');
    const items = [good('a'), { name: 'bad', inputSchema: { type: 'string' } }];
    const first = await merger.accept('tools', answer(up, items));
    const again = await merger.accept('tools', answer(up, structuredClone(items)));
    expect(again).toBe(first);
    expect(again.leftOut).toEqual([
      { list: 'tools', name: 'bad', reason: 'inputSchema must have type "object" at its root' },
    ]);
    expect(again.tools.map((t) => t.name)).toEqual(['u__a']);
  });

  it('checks a changed answer in full: a schema that stops compiling is left out', async () => {
    const merger = new LiveListMerger();
    const up = upstream('u');
    const first = await merger.accept('tools', answer(up, [good('a'), good('b')]));
    expect(first.leftOut).toEqual([]);
    const changed = await merger.accept(
      'tools',
      answer(up, [good('a'), { name: 'b', inputSchema: { type: 'object', properties: 3 } }]),
    );
    expect(changed).not.toBe(first);
    expect(changed.tools.map((t) => t.name)).toEqual(['u__a']);
    expect(changed.leftOut).toHaveLength(1);
    expect(changed.leftOut[0]!.name).toBe('b');
    expect(changed.leftOut[0]!.reason).toMatch(/^inputSchema does not compile/);
    // and a fixed answer is accepted again, not served from the first memo entry
    const fixed = await merger.accept('tools', answer(up, [good('a'), good('b')]));
    expect(fixed.tools.map((t) => t.name)).toEqual(['u__a', 'u__b']);
    expect(fixed.leftOut).toEqual([]);
  });

  it('re-checks when only the capabilities, the era or the list differ', async () => {
    const merger = new LiveListMerger();
    const up = upstream('u');
    const items = [good('a')];
    const first = await merger.accept('tools', answer(up, items));
    const otherCaps = await merger.accept('tools', {
      ...answer(up, items),
      capabilities: { tools: { listChanged: true } },
    });
    expect(otherCaps).not.toBe(first);
    expect(otherCaps.capabilities).toEqual({ tools: { listChanged: true } });
    const otherEra = await merger.accept('tools', { ...answer(up, items), era: '2025' });
    expect(otherEra.era).toBe('2025');
    const asPrompts = await merger.accept('prompts', answer(up, [{ name: 'a' }]));
    expect(asPrompts.tools).toEqual([]);
    expect(asPrompts.prompts.map((p) => p.name)).toEqual(['u__a']);
    // the tools memo is still the era-2025 answer's, the prompts list has its own
    expect(await merger.accept('tools', { ...answer(up, items), era: '2025' })).toBe(otherEra);
  });

  it('never lends one upstream definition the contribution of another with the same id', async () => {
    const merger = new LiveListMerger();
    const items = [good('a')];
    const first = await merger.accept('tools', answer(upstream('u', 'one__'), items));
    const renamed = await merger.accept('tools', answer(upstream('u', 'two__'), items));
    expect(renamed).not.toBe(first);
    expect(renamed.tools.map((t) => t.name)).toEqual(['two__a']);
  });

  it('keeps the same results as acceptUpstreamLists for every answer', async () => {
    const merger = new LiveListMerger();
    const up = upstream('u');
    const answers = [
      [good('x'), good('x'), { name: '', inputSchema: schema }],
      [good('x'), good('x'), { name: '', inputSchema: schema }],
      [good('y')],
    ];
    for (const items of answers) {
      const expected = acceptUpstreamLists(
        up,
        {
          era: '2026',
          capabilities: { tools: {}, prompts: {} },
          tools: items,
          prompts: [],
          resources: [],
          resourceTemplates: [],
        },
        new SchemaChecker(),
      );
      const got = await merger.accept('tools', answer(up, items));
      expect(got.fingerprint).toBe(expected.fingerprint);
      expect(got.leftOut).toEqual(expected.leftOut);
    }
  });
});
