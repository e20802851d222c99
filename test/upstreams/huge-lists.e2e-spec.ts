import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';
import { callTool, rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/**
 * An upstream whose tools/list is far over the caps (docs/operations.md, "Upstream MCP
 * servers"): 40,000 tools, each with its own inputSchema, about 5 MB (under the answer cap of
 * execution.maxResponseBytes). The list is refused as it is counted, with
 * UpstreamTooManyToolsError, before it is parsed or a schema of it compiled; the upstream keeps
 * its last good list and the gateway keeps answering. Both eras, a JSON body and an SSE
 * answer, pages, and an answer that never ends after its first tools.
 */

const HUGE = 40_000;

/** `n` tools, each with an inputSchema of its own. */
function tools(n: number, prefix = 'tool'): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) =>
    upTool(`${prefix}_${i}`, {
      description: `Tool ${i}.`,
      inputSchema: {
        type: 'object',
        properties: { [`p${i}`]: { type: 'string', maxLength: i + 1 } },
      },
    }),
  );
}

async function upstreamRow(gateway: GatewayProcess, id: string): Promise<any> {
  const view: any = await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json();
  return view.upstreams.find((u: { id: string }) => u.id === id);
}

async function toolNames(gateway: GatewayProcess): Promise<string[]> {
  const answer = await rpc(gateway.mcpUrl, 'tools/list');
  return answer.json.result.tools.map((t: { name: string }) => t.name);
}

let misses = 0;
/**
 * One refresh round (a tools/call of an unknown tool waits for a round that started after it,
 * contract §8), with GET liveness asked over and over until the round is applied: every one of
 * those asks must be answered 200. Resolves with how many were.
 */
async function roundWithLiveness(gateway: GatewayProcess): Promise<number> {
  let done = false;
  let answered = 0;
  const probe = (async () => {
    do {
      const res = await fetch(`${gateway.managementUrl}/actuator/health/liveness`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      answered++;
    } while (!done);
  })();
  const answer = await callTool(gateway.mcpUrl, `no_such_tool_${++misses}`);
  done = true;
  await probe;
  expect(answer.error.code).toBe(-32001);
  return answered;
}

describe('a huge upstream tools/list is refused before it is parsed or compiled (maxToolsPerUpstream)', () => {
  let legacy: ScriptedUpstream;
  let modern: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    legacy = await ScriptedUpstream.start({ tools: tools(10) });
    modern = await ScriptedUpstream.start({ era: '2026', tools: tools(10) });
    gateway = await GatewayProcess.start({
      // the default caps: maxToolsPerBundle 100 (so maxToolsPerUpstream 100), maxToolsTotal 200
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('legacy', legacy.url, { timeouts: { listMillis: 20_000 } }),
          upstream('modern', modern.url, { timeouts: { listMillis: 20_000 } }),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await legacy?.stop();
    await modern?.stop();
  });

  afterEach(() => {
    legacy.pageSize = undefined;
    legacy.off('tools/list');
    modern.tools = tools(10);
    modern.off('tools/list');
  });

  it('40,000 tools (about 5 MB) in one JSON answer: refused with UpstreamTooManyToolsError naming the cap, the last good list stays, liveness answers during the round', async () => {
    expect(await toolNames(gateway)).toHaveLength(20);
    legacy.tools = tools(HUGE);
    const bytes = JSON.stringify({ tools: legacy.tools }).length;
    expect(bytes).toBeGreaterThan(4_000_000);
    expect(bytes).toBeLessThan(8 * 1_048_576);
    expect(await roundWithLiveness(gateway)).toBeGreaterThanOrEqual(1);
    const row = await upstreamRow(gateway, 'legacy');
    expect(row).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamTooManyToolsError',
      counts: { tools: 10 },
    });
    await gateway.waitForOutput(
      'tools/list lists more than 100 tools (mcp.discovery.maxToolsPerUpstream 100)',
    );
    const names = await toolNames(gateway);
    expect(names).toHaveLength(20);
    expect(names).toContain('legacy__tool_9');
    expect(names).not.toContain('legacy__tool_10');
    const metrics = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    expect(metrics).toMatch(
      /mcp_gateway_upstream_pulls_total\{upstream="legacy",outcome="UpstreamTooManyToolsError"\} [1-9]/,
    );

    // back under the cap, it is adopted again
    legacy.tools = tools(100);
    await roundWithLiveness(gateway);
    expect(await upstreamRow(gateway, 'legacy')).toMatchObject({
      status: 'healthy',
      lastErrorType: null,
      counts: { tools: 100 },
    });
  });

  it('the count is made as the answer arrives: an answer that stops after its first 150 tools and never ends is refused at once, not after listMillis', async () => {
    legacy.on('tools/list', (req) => {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"tools":`;
      const first = JSON.stringify(tools(150)).slice(0, -1);
      // the rest would come a minute later: the round ends long before (listMillis is 20 s)
      return { raw: [head + first, ',{"name":"late"}]}}'], chunkGapMs: 60_000 };
    });
    await roundWithLiveness(gateway);
    // the last good list is the 100 tools the test before left
    expect(await upstreamRow(gateway, 'legacy')).toMatchObject({
      status: 'degraded',
      lastErrorType: 'UpstreamTooManyToolsError',
      counts: { tools: 100 },
    });
  });

  it('pages are counted together: the page that passes the cap is the last one asked for', async () => {
    legacy.tools = tools(HUGE);
    legacy.pageSize = 60;
    const before = legacy.rpcs('tools/list').length;
    await roundWithLiveness(gateway);
    expect(legacy.rpcs('tools/list').length - before).toBe(2);
    expect(await upstreamRow(gateway, 'legacy')).toMatchObject({
      lastErrorType: 'UpstreamTooManyToolsError',
      counts: { tools: 100 },
    });
  });

  it('a 2026-07-28 upstream answering 40,000 tools on an SSE stream is refused the same way; the other upstream is not touched', async () => {
    modern.on('tools/list', () => ({ sse: true, result: { tools: tools(HUGE) } }));
    await roundWithLiveness(gateway);
    expect(await upstreamRow(gateway, 'modern')).toMatchObject({
      status: 'degraded',
      era: '2026',
      lastErrorType: 'UpstreamTooManyToolsError',
      counts: { tools: 10 },
    });
    const names = await toolNames(gateway);
    expect(names.filter((n) => n.startsWith('modern__'))).toHaveLength(10);
  });
});

describe('maxToolsPerUpstream set on its own, and a live upstream', () => {
  const track = stopAfterEach();

  it('maxToolsPerUpstream 5 refuses a 6-tool list (beside maxToolsPerBundle 100); a lists: live upstream over it is left out of tools/list, the others still listed', async () => {
    const pulled = track(await ScriptedUpstream.start({ tools: tools(6) }));
    const live = track(await ScriptedUpstream.start({ tools: tools(6, 'live') }));
    const small = track(await ScriptedUpstream.start({ tools: tools(5, 'small') }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          discovery: { maxToolsPerUpstream: 5 },
          upstreams: [
            upstream('pulled', pulled.url),
            upstream('live', live.url, { lists: 'live' }),
            upstream('small', small.url),
          ],
        }),
        waitReady: true,
      }),
    );
    expect(await upstreamRow(gateway, 'pulled')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamTooManyToolsError',
    });
    await gateway.waitForOutput(
      'tools/list lists more than 5 tools (mcp.discovery.maxToolsPerUpstream 5)',
    );
    const names = await toolNames(gateway);
    expect(names).toHaveLength(5);
    expect(names.every((n) => n.startsWith('small__'))).toBe(true);
  });
});

describe('resources, resource templates and prompts are capped like tools (maxListItemsPerUpstream)', () => {
  const track = stopAfterEach();

  const resources = (n: number): Record<string, unknown>[] =>
    Array.from({ length: n }, (_, i) => ({ uri: `r://item/${i}`, name: `item ${i}` }));

  it('a paged resources/list over maxListItemsPerUpstream is refused as it is counted (UpstreamTooManyItemsError naming the key), no page past the cap is asked for; a live upstream over it is skipped; one under it is served', async () => {
    const pulled = track(
      await ScriptedUpstream.start({ resources: resources(2000), pageSize: 20 }),
    );
    const live = track(await ScriptedUpstream.start({ resources: resources(2000), pageSize: 20 }));
    const small = track(
      await ScriptedUpstream.start({ prompts: [{ name: 'p1' }, { name: 'p2' }] }),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          discovery: { maxListItemsPerUpstream: 50 },
          upstreams: [
            upstream('pulled', pulled.url),
            upstream('live', live.url, { lists: 'live' }),
            upstream('small', small.url),
          ],
        }),
        waitReady: true,
      }),
    );
    expect(await upstreamRow(gateway, 'pulled')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamTooManyItemsError',
    });
    await gateway.waitForOutput(
      'resources/list lists more than 50 resources (mcp.discovery.maxListItemsPerUpstream 50)',
    );
    // pages of 20: the third passes the cap and is the last one asked for
    expect(pulled.rpcs('resources/list')).toHaveLength(3);
    // a live upstream's resources are pulled too (they route resources/read; docs/operations.md
    // §11 "Live lists"), under the same cap
    expect(await upstreamRow(gateway, 'live')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamTooManyItemsError',
    });
    expect(live.rpcs('resources/list')).toHaveLength(3);
    const prompts = await rpc(gateway.mcpUrl, 'prompts/list');
    expect(prompts.json.result.prompts).toHaveLength(2);
    const metrics = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    expect(metrics).toMatch(
      /mcp_gateway_upstream_pulls_total\{upstream="pulled",outcome="UpstreamTooManyItemsError"\} [1-9]/,
    );

    // the pulled upstream serves nothing yet, and the live one's fetch is refused
    const listed = await rpc(gateway.mcpUrl, 'resources/list');
    expect(listed.json.error.data).toEqual({ failedSources: ['live'] });
    await gateway.waitForOutput(
      /Upstream live: live resources\/list skipped \(resources\/list lists more than 50 resources/,
    );
    // its live fetch: three more pages
    expect(live.rpcs('resources/list')).toHaveLength(6);
  });
});

describe('a second replica with a lower cap and a shared Redis copy', () => {
  const track = stopAfterEach();
  const keyPrefix = uniqueKeyPrefix();
  const redis = redisClient();

  afterAll(async () => {
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('a copy stored by a replica with maxToolsPerUpstream 200 is not adopted at warm start by one with the default 100, which refuses the list too', async () => {
    const big = track(await ScriptedUpstream.start({ tools: tools(150) }));
    const config = (discovery: Record<string, unknown>) =>
      gatewayConfig([], {
        redis: { keyPrefix },
        discovery,
        upstreams: [upstream('big', big.url)],
      });
    const first = track(
      await GatewayProcess.start({
        mcp: config({ maxToolsPerUpstream: 200 }),
        env: { REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    );
    expect(await toolNames(first)).toHaveLength(150);
    const key = `${keyPrefix}:{mcp-gateway-test:upstream/big}:lists`;
    for (let i = 0; i < 100 && (await redis.get(key)) === null; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await redis.get(key)).not.toBeNull();

    const second = track(
      await GatewayProcess.start({
        mcp: config({}),
        env: { REDIS_URL: SHARED_REDIS_URL },
        waitReady: true,
      }),
    );
    expect(await upstreamRow(second, 'big')).toMatchObject({
      status: 'unreachable',
      source: null,
      lastErrorType: 'UpstreamTooManyToolsError',
      counts: { tools: 0 },
    });
    expect(second.output).not.toContain('Upstream big: warm start from the Redis copy');
    expect(await toolNames(second)).toEqual([]);
  });
});
