import { isClash, renderProblem, type ConfigProblem } from './config-problem';
import type { McpConfig } from './mcp-config.model';
import { prefixProblems } from './prefix-rules';
import { upstreamProblems } from './upstream-rules';

function mcp(
  bundles: readonly { id: string; namePrefix: string }[],
  upstreams: readonly { id: string; namePrefix?: string; url?: string }[],
): McpConfig {
  return {
    discovery: { enabled: true },
    bundles: bundles.map((b) => ({ ...b, enabled: true })),
    upstreams: upstreams.map((u) => ({ url: 'http://127.0.0.1:1/mcp', ...u })),
  } as unknown as McpConfig;
}

const lines = (problems: readonly ConfigProblem[]): string[] => problems.map(renderProblem);

describe('prefixProblems: one prefix rule over bundles and upstreams (contract §3, docs/operations.md §10)', () => {
  it('reports a duplicate on the later source and an overlap on the longer prefix, naming the other as data', () => {
    const problems = prefixProblems(
      mcp(
        [
          { id: 'a', namePrefix: 'team.' },
          { id: 'b', namePrefix: 'team.' },
        ],
        [
          { id: 'u', namePrefix: 'team.x.' },
          { id: 'v', namePrefix: 'solo__' },
        ],
      ),
    );
    expect(problems).toEqual([
      {
        path: 'mcp.bundles[1].namePrefix',
        code: 'duplicate-prefix',
        other: 'mcp.bundles[0]',
        message: '"team." duplicates mcp.bundles[0].namePrefix (contract §3)',
      },
      {
        path: 'mcp.upstreams[0].namePrefix',
        code: 'overlapping-prefix',
        other: 'mcp.bundles[0]',
        message:
          '"team.x." starts with mcp.bundles[0].namePrefix "team.", so a published name could belong to both',
      },
      {
        path: 'mcp.upstreams[0].namePrefix',
        code: 'overlapping-prefix',
        other: 'mcp.bundles[1]',
        message:
          '"team.x." starts with mcp.bundles[1].namePrefix "team.", so a published name could belong to both',
      },
    ]);
    expect(problems.every(isClash)).toBe(true);
  });

  it("compares an upstream's derived prefix (<id>__) and renders the lines the boot prints", () => {
    expect(
      lines(
        prefixProblems(mcp([{ id: 'b', namePrefix: 'docs__' }], [{ id: 'docs' }, { id: 'docs' }])),
      ),
    ).toEqual([
      'mcp.upstreams[0].namePrefix: "docs__" duplicates mcp.bundles[0].namePrefix (prefixes are unique across bundles and upstreams)',
      'mcp.upstreams[1].namePrefix: "docs__" duplicates mcp.bundles[0].namePrefix (prefixes are unique across bundles and upstreams)',
      'mcp.upstreams[1].namePrefix: "docs__" duplicates mcp.upstreams[0].namePrefix (prefixes are unique across bundles and upstreams)',
    ]);
  });

  it("refuses the gateway's own prefix on any source, as a problem that is not a clash", () => {
    const problems = [
      ...prefixProblems(mcp([{ id: 'b', namePrefix: 'gateway__x.' }], [])),
      ...prefixProblems(mcp([], [{ id: 'u', namePrefix: 'gate' }])),
      // look-alikes in another letter case
      ...prefixProblems(mcp([{ id: 'c', namePrefix: 'GATEWAY__' }], [])),
      ...prefixProblems(mcp([], [{ id: 'v', namePrefix: 'GateWay_' }])),
    ];
    expect(problems.map((p) => [p.path, p.code])).toEqual([
      ['mcp.bundles[0].namePrefix', 'reserved-prefix'],
      ['mcp.upstreams[0].namePrefix', 'reserved-prefix'],
      ['mcp.bundles[0].namePrefix', 'reserved-prefix'],
      ['mcp.upstreams[0].namePrefix', 'reserved-prefix'],
    ]);
    // a prefix that only shares letters with it is not one
    expect(prefixProblems(mcp([{ id: 'd', namePrefix: 'gateways.' }], []))).toEqual([]);
    expect(problems.some(isClash)).toBe(false);
  });

  it('leaves "" to the sole-source rule, which is not a clash either', () => {
    const config = mcp([{ id: 'b', namePrefix: 'b.' }], [{ id: 'u', namePrefix: '' }]);
    expect(prefixProblems(config)).toEqual([]);
    const [empty] = upstreamProblems(config);
    expect(empty).toMatchObject({
      path: 'mcp.upstreams[0].namePrefix',
      code: 'shared-empty-prefix',
    });
    expect(empty !== undefined && isClash(empty)).toBe(false);
  });

  it('says a duplicate upstream id is a clash with the source that holds it', () => {
    const [problem] = upstreamProblems(mcp([{ id: 'x', namePrefix: 'x.' }], [{ id: 'x' }]));
    expect(problem).toEqual({
      path: 'mcp.upstreams[0].id',
      code: 'duplicate-id',
      other: 'mcp.bundles[0]',
      message: '"x" duplicates mcp.bundles[0].id (ids are unique across bundles and upstreams)',
    });
  });
});
