import type { UpstreamDefinition } from '@app/config';
import { CatalogExtras } from '../catalog/catalog-extras';
import { CatalogSnapshot } from '../catalog/catalog-snapshot';
import type { CatalogTool } from '../catalog/catalog-tool';
import { SchemaChecker } from '../manifest/schema-checker';
import { LiveListMerger, type LiveListAnswer } from './live-lists';
import { acceptUpstreamLists } from './upstream-contribution';

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

describe('live lists merge by the catalog rules (issue 11 §4)', () => {
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
      merger.accept(
        'tools',
        answer(m, [
          { name: 'z.last', inputSchema: schema },
          { name: 'first', inputSchema: schema },
        ]),
      ),
      merger.accept('tools', answer(a, [{ name: 'only', inputSchema: schema }])),
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

  it('leaves out a live tool the MCP rules refuse, as a pull would, and keeps the rest', () => {
    const merger = new LiveListMerger();
    const c = merger.accept(
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
        merger.accept('tools', answer(bare, [{ name: 'pay', inputSchema: schema }])),
        merger.accept('tools', answer(other, [{ name: 'x', inputSchema: schema }])),
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
    const live = merger.accept('prompts', answer(upstream('a'), [{ name: 'brief' }]));
    const merged = await merger.merge(catalog, 'prompts', [live], ['snap', 'a']);
    expect(names(merged.json)).toEqual(['a__brief', 'snap__review']);
  });
});
