import type { BundleDefinition } from '@app/config';
import type { AcceptedManifest, ManifestTool } from '../manifest/manifest.types';
import { bundleContribution } from '../bundle/bundle-contribution';
import { compareCodeUnits, mergeCatalog, type MergeResult } from './merge-catalog';
import type { SourceContribution } from './source-contribution';

const LIMITS = { maxToolsTotal: 200, maxToolTimeoutMillis: 30_000 };

function bundle(id: string, namePrefix = `${id}.`): BundleDefinition {
  return {
    id,
    manifestUrl: `http://${id}.svc/tool-manifest`,
    baseEndpoint: `http://${id}.svc/mcp`,
    namePrefix,
    enabled: true,
    authorization: { mode: 'none' },
    serverErrorBody: 'show',
  };
}

function tool(
  name: string,
  meta: { timeoutMillis?: number; enabled?: boolean; version?: string } = {},
): ManifestTool {
  return {
    name,
    publishedJson: JSON.stringify({
      name,
      description: `Runs ${name}.`,
      inputSchema: { type: 'object' },
    }),
    fingerprint: `fp-${name}-${meta.version ?? '1'}`,
    version: meta.version ?? '1',
    timeoutMillis: meta.timeoutMillis,
    enabled: meta.enabled ?? true,
  };
}

/** A bundle's manifest as the merge takes it (its contribution). */
function input(id: string, tools: ManifestTool[], namePrefix?: string): SourceContribution {
  const manifest: AcceptedManifest = {
    bundleId: id,
    revision: '1',
    tools,
    fingerprint: `fp-${id}`,
  };
  return bundleContribution(bundle(id, namePrefix), manifest);
}

function merged(result: MergeResult) {
  if (!result.ok) throw new Error(`expected a merged catalog, got ${JSON.stringify(result)}`);
  return result.tools;
}

describe('contract §7.2: enabled: false tools are registered but not listed', () => {
  it('leaves _meta.enabled: false tools out of the catalog', async () => {
    const tools = merged(
      await mergeCatalog(
        [input('r', [tool('r.a'), tool('r.off', { enabled: false }), tool('r.b')])],
        LIMITS,
      ),
    );
    expect(tools.map((t) => t.name)).toEqual(['r.a', 'r.b']);
  });

  it('does not count disabled tools against maxToolsTotal', async () => {
    const result = await mergeCatalog(
      [
        input('a', [tool('a.x'), tool('a.off', { enabled: false })]),
        input('b', [tool('b.x'), tool('b.off', { enabled: false })]),
      ],
      { ...LIMITS, maxToolsTotal: 2 },
    );
    expect(merged(result).map((t) => t.name)).toEqual(['a.x', 'b.x']);
  });

  it('lets a disabled tool share its name with a listed tool of another bundle (no collision)', async () => {
    const result = await mergeCatalog(
      [
        input('a', [tool('shared.x', { enabled: false })], 'shared.'),
        input('b', [tool('shared.x')], 'shared.'),
      ],
      LIMITS,
    );
    expect(merged(result).map((t) => [t.sourceId, t.name])).toEqual([['b', 'shared.x']]);
  });
});

describe('contract §7.4: sorted by (bundleId, name) in code-unit order', () => {
  it('sorts by bundleId, then name, whatever the input order', async () => {
    const inputs = [
      input('zeta', [tool('zeta.b'), tool('zeta.a')]),
      input('Alpha', [tool('Alpha.y'), tool('Alpha.x')]),
      input('alpha', [tool('alpha.b'), tool('alpha.B'), tool('alpha.a'), tool('alpha.A')]),
    ];
    const expected = [
      ['Alpha', 'Alpha.x'],
      ['Alpha', 'Alpha.y'],
      ['alpha', 'alpha.A'],
      ['alpha', 'alpha.B'],
      ['alpha', 'alpha.a'],
      ['alpha', 'alpha.b'],
      ['zeta', 'zeta.a'],
      ['zeta', 'zeta.b'],
    ];
    expect(merged(await mergeCatalog(inputs, LIMITS)).map((t) => [t.sourceId, t.name])).toEqual(
      expected,
    );
    expect(
      merged(await mergeCatalog([...inputs].reverse(), LIMITS)).map((t) => [t.sourceId, t.name]),
    ).toEqual(expected);
  });

  it('orders by UTF-16 code units, not by locale (uppercase before lowercase, "_" between them, "-" and "." before digits)', async () => {
    const names = ['r.b', 'r._', 'r.B', 'r.9', 'r.-', 'r..', 'r./', 'r.a'];
    const tools = merged(
      await mergeCatalog(
        [
          input(
            'r',
            names.map((n) => tool(n)),
          ),
        ],
        LIMITS,
      ),
    );
    expect(tools.map((t) => t.name)).toEqual([
      'r.-',
      'r..',
      'r./',
      'r.9',
      'r.B',
      'r._',
      'r.a',
      'r.b',
    ]);
  });

  it('compareCodeUnits compares code units and returns 0 only for equal strings', () => {
    expect(compareCodeUnits('B', 'a')).toBe(-1);
    expect(compareCodeUnits('a', 'B')).toBe(1);
    expect(compareCodeUnits('a', 'a')).toBe(0);
    expect(compareCodeUnits('a', 'a.')).toBe(-1);
    expect(['é', 'z', 'e'].sort(compareCodeUnits)).toEqual(['e', 'z', 'é']);
  });
});

describe('contract §7.5: timeoutMillis is capped at maxToolTimeoutMillis, which is also the default', () => {
  it('caps 45000 at 30000, keeps 500, and gives an absent timeout 30000 (B17)', async () => {
    const tools = merged(
      await mergeCatalog(
        [
          input('reports', [
            tool('reports.slow_report', { timeoutMillis: 45_000 }),
            tool('reports.quick', { timeoutMillis: 500 }),
            tool('reports.defaulted'),
            tool('reports.disabled', { timeoutMillis: 1000, enabled: false }),
          ]),
        ],
        LIMITS,
      ),
    );
    expect(Object.fromEntries(tools.map((t) => [t.name, t.timeoutMillis]))).toEqual({
      'reports.defaulted': 30_000,
      'reports.quick': 500,
      'reports.slow_report': 30_000,
    });
  });

  it('keeps a timeout equal to the cap', async () => {
    const tools = merged(
      await mergeCatalog([input('r', [tool('r.a', { timeoutMillis: 30_000 })])], LIMITS),
    );
    expect(tools[0]?.timeoutMillis).toBe(30_000);
  });
});

describe('catalog entries carry the route from config only (contract §1)', () => {
  it('routes each tool to its own bundle definition and keeps version and published entry', async () => {
    const definition = bundle('a');
    const listed = tool('a.x', { version: '4' });
    const a = bundleContribution(definition, {
      bundleId: 'a',
      revision: '1',
      tools: [listed],
      fingerprint: 'fp-a',
    });
    const [entry] = merged(await mergeCatalog([a], LIMITS));
    expect(entry?.route).toEqual({ kind: 'bundle', bundle: definition });
    expect(entry?.route.kind === 'bundle' && entry.route.bundle).toBe(definition);
    expect(entry?.version).toBe('4');
    expect(entry?.publishedJson).toBe(listed.publishedJson);
  });
});

describe('contract §7.3: more than maxToolsTotal listed tools rejects the aggregate', () => {
  it('returns CatalogTooLargeError with every bundle id', async () => {
    const result = await mergeCatalog(
      [input('b', [tool('b.x'), tool('b.y')]), input('a', [tool('a.x')]), input('c', [])],
      { ...LIMITS, maxToolsTotal: 2 },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errorType).toBe('CatalogTooLargeError');
    expect(result.detail).toBe('3 listed tools exceed maxToolsTotal 2');
    expect([...result.bundleIds].sort()).toEqual(['a', 'b', 'c']);
  });

  it('accepts exactly maxToolsTotal listed tools', async () => {
    const result = await mergeCatalog([input('a', [tool('a.x')]), input('b', [tool('b.x')])], {
      ...LIMITS,
      maxToolsTotal: 2,
    });
    expect(merged(result)).toHaveLength(2);
  });
});

describe('contract §7.6: a name published by two bundles rejects the aggregate, never picking a winner', () => {
  const one = (): SourceContribution =>
    input('one', [tool('shared.search'), tool('shared.one')], 'shared.');
  const two = (): SourceContribution =>
    input('two', [tool('shared.search'), tool('shared.two')], 'shared.');

  it('returns ToolNameCollisionError naming the tool and both bundles', async () => {
    const result = await mergeCatalog([one(), two()], LIMITS);
    expect(result).toEqual({
      ok: false,
      errorType: 'ToolNameCollisionError',
      detail: 'tool names published by more than one bundle: "shared.search" (one, two)',
      bundleIds: ['one', 'two'],
    });
  });

  it('gives the identical result whichever input order', async () => {
    expect(await mergeCatalog([two(), one()], LIMITS)).toEqual(
      await mergeCatalog([one(), two()], LIMITS),
    );
  });

  it('names only the bundles taking part in the collision', async () => {
    const result = await mergeCatalog(
      [input('zz', [tool('zz.a')]), two(), one(), input('aa', [tool('aa.a')])],
      LIMITS,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.bundleIds).toEqual(['one', 'two']);
  });

  it('lists every colliding name', async () => {
    const result = await mergeCatalog(
      [
        input('one', [tool('s.a'), tool('s.b')], 's.'),
        input('two', [tool('s.b'), tool('s.a')], 's.'),
      ],
      LIMITS,
    );
    expect(!result.ok && result.detail).toBe(
      'tool names published by more than one bundle: "s.a" (one, two), "s.b" (one, two)',
    );
  });
});
