import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

type Block = { type: string; text: string };

/**
 * docs/operations.md §16 "Tool search" under hostile input: a query is bounded before it is
 * ranked (no typo table the square of a 40 KB word), the search tools take from the caller's
 * rate limits as every call does, and an upstream that publishes its tools' own names cannot
 * put one in the gateway's reserved prefix.
 */
describe('tool search against hostile callers and upstreams', () => {
  let bare: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // "" as namePrefix: allowed for the only source (docs/operations.md §10)
    bare = await ScriptedUpstream.start({
      tools: [
        upTool('gateway__call_tool'),
        upTool('gateway__search_tools'),
        upTool('lookup'),
        upTool('open_claim', { description: 'Opens a new insurance claim.' }),
      ],
    });
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('bare', bare.url, { namePrefix: '' })] }),
        toolSearch: { enabled: true },
        rateLimits: { perSubject: { capacity: 12, refillPerSecond: 0.01 } },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await bare?.stop();
  });

  const search = async (args: object): Promise<any> =>
    (await rpc(gateway.mcpUrl, 'tools/call', { name: 'gateway__search_tools', arguments: args }))
      .json;

  it('refuses a query over its maxLength as isError, and ranks a long one within it at once', async () => {
    const huge = await search({ query: 'abcdefghij'.repeat(8000) });
    expect(huge.result.isError).toBe(true);
    expect((huge.result.content as Block[])[0]?.text).toMatch(
      /- \/query: must NOT have more than 1000 characters/,
    );
    // one 1,000-letter word and 200 short ones: answered, not a 500 nor a stall of seconds
    for (const query of ['abcdefghij'.repeat(100), 'insurance claim '.repeat(62)]) {
      const answer = await search({ query });
      expect(answer.error).toBeUndefined();
      expect(answer.result.isError).toBeFalsy();
    }
    const found = await search({ query: `open ${'claim '.repeat(150)}` });
    expect(found.result.structuredContent.tools[0].name).toBe('open_claim');
  });

  it("an unprefixed upstream's tools in gateway__ are left out: the gateway's own tools answer", async () => {
    const found = await search({ query: 'scripted upstream tool', limit: 25 });
    const names = (found.result.structuredContent.tools as { name: string }[]).map((t) => t.name);
    expect(names).toContain('lookup');
    expect(names.filter((n) => n.startsWith('gateway__'))).toEqual([]);
    const described = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'gateway__describe_tools',
      arguments: { names: ['gateway__call_tool', 'lookup'] },
    });
    expect(described.json.result.structuredContent).toMatchObject({
      tools: [{ name: 'lookup' }],
      unknown: ['gateway__call_tool'],
    });
    const status = (await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json()) as {
      upstreams: { id: string; leftOut?: { name: string; reason: string }[] }[];
    };
    const leftOut = status.upstreams.find((u) => u.id === 'bare')?.leftOut ?? [];
    expect(leftOut.map((l) => l.name).sort()).toEqual([
      'gateway__call_tool',
      'gateway__search_tools',
    ]);
    expect(leftOut[0]?.reason).toContain('reserved for the gateway');
    expect(bare.calls()).toHaveLength(0);
  });

  it('the search tools take from the caller’s rate limit as every call does', async () => {
    // the bucket holds 12 and barely refills: earlier tests took some, these take the rest
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const answer = await rpc(gateway.mcpUrl, 'tools/call', {
        name: i % 2 === 0 ? 'gateway__search_tools' : 'gateway__describe_tools',
        arguments: i % 2 === 0 ? { query: 'claim' } : { names: ['open_claim'] },
      });
      statuses.push(answer.status);
    }
    expect(statuses).toContain(429);
    expect(statuses.indexOf(429)).toBeLessThan(12);
    expect(statuses.slice(statuses.indexOf(429)).every((s) => s === 429)).toBe(true);
  });
});
