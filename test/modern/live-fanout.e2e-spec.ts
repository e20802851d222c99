import { createServer } from 'node:net';
import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { LiveUpstream } from '../support/live-upstreams';
import { rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const PARTIAL_SOURCES = 'io.github.mcp-gateway/partialSources';

/** A port on 127.0.0.1 that nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The v2 SDK client pinned to 2026-07-28 (stateless), sending `x-tenant` on every request. */
async function connectModern(url: string, tenant: string): Promise<V2Client> {
  const client = new V2Client(
    { name: 'e2e-live', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { 'x-tenant': tenant } },
    }),
  );
  return client;
}

async function listAsV1(url: string, tenant: string) {
  const client = await connectV1(url, { 'x-tenant': tenant });
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

/** A 2026 list result as the wire carries it (cache hints included), by raw request. */
async function rawModernList(
  url: string,
  tenant: string,
  method = 'tools/list',
): Promise<Record<string, unknown>> {
  const answer = await rpc(
    url,
    method,
    {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      },
    },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'x-tenant': tenant },
  );
  expect(answer.status).toBe(200);
  return answer.json.result as Record<string, unknown>;
}

const live = (id: string, url: string, extra: Record<string, unknown> = {}) =>
  upstream(id, url, { lists: 'live', forwardHeaders: ['X-Tenant'], ...extra });

/**
 * Live fan-out (docs/operations.md §11 "Live lists"): `lists: live` upstreams are asked for their
 * lists on every request, with the caller's forwarded headers, and merged with the catalog's
 * sources.
 */
describe('live fan-out: lists: live upstreams answer per caller (docs/operations.md §11 "Live lists")', () => {
  let service: TestToolService;
  let alpha: LiveUpstream;
  let beta: LiveUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    alpha = await LiveUpstream.start({ stem: 'alpha' });
    beta = await LiveUpstream.start({ stem: 'beta', era: '2025' });
    const ghost = await closedPort();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          upstreams: [
            live('alpha', alpha.url),
            live('beta', beta.url),
            live('ghost', `http://127.0.0.1:${ghost}/mcp`, {
              timeouts: { connectMillis: 200, listMillis: 1000 },
            }),
          ],
        }),
        http: { modernEra: true },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await alpha?.stop();
    await beta?.stop();
    await service?.stop();
  });

  it('two live upstreams (2026 and 2025) answer each caller its own list, merged with the bundle in one sorted list', async () => {
    const acme = await listAsV1(gateway.mcpUrl, 'acme');
    expect(acme.tools.map((t) => t.name)).toEqual([
      'alpha__acme_alpha',
      'alpha__alpha_whoami',
      'beta__acme_beta',
      'beta__beta_whoami',
      'ins.quote',
    ]);
    const globex = await listAsV1(gateway.mcpUrl, 'globex');
    expect(globex.tools.map((t) => t.name)).toEqual([
      'alpha__alpha_whoami',
      'alpha__globex_alpha',
      'beta__beta_whoami',
      'beta__globex_beta',
      'ins.quote',
    ]);
    // each upstream was asked with the caller's own header, on this request
    expect(alpha.toolLists('globex').length).toBeGreaterThan(0);
    expect(beta.toolLists('globex').length).toBeGreaterThan(0);
    // an entry is what the upstream listed, only its name prefixed
    expect(acme.tools.find((t) => t.name === 'alpha__acme_alpha')?.description).toBe(
      'alpha for acme',
    );
  });

  it('the 2026 client gets the same per-caller list, and prompts/list is live too', async () => {
    const client = await connectModern(gateway.mcpUrl, 'initech');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'alpha__alpha_whoami',
        'alpha__initech_alpha',
        'beta__beta_whoami',
        'beta__initech_beta',
        'ins.quote',
      ]);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(['alpha__initech_brief', 'beta__initech_brief']);
    } finally {
      await client.close();
    }
  });

  it('a live upstream that is down is skipped, named missing in _meta, logged with its id and counted', async () => {
    const { _meta } = await listAsV1(gateway.mcpUrl, 'acme');
    expect(_meta?.[PARTIAL_SOURCES]).toEqual([{ id: 'ghost', kind: 'upstream', state: 'missing' }]);
    // log lines reach stdout in batches, within 200 ms
    await gateway.waitForOutput('Upstream ghost: live tools/list skipped');
    const metrics = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    const line =
      /mcp_gateway_upstream_live_failures_total\{upstream="ghost",method="tools\/list"\} (\d+)/.exec(
        metrics,
      );
    expect(Number(line?.[1])).toBeGreaterThanOrEqual(1);
    expect(metrics).not.toMatch(/upstream_live_failures_total\{upstream="(alpha|beta)"/);
  });

  it('a live tool (and prompt) the snapshot does not know routes by its prefix to its upstream, for the caller', async () => {
    const acme = await connectV1(gateway.mcpUrl, { 'x-tenant': 'acme' });
    try {
      const alphaAnswer = await acme.callTool({ name: 'alpha__acme_alpha', arguments: {} });
      expect(alphaAnswer.content).toEqual([{ type: 'text', text: 'alpha answered acme' }]);
      const betaAnswer = await acme.callTool({ name: 'beta__beta_whoami', arguments: {} });
      expect(betaAnswer.content).toEqual([{ type: 'text', text: 'acme' }]);
      // prompts/get of a live prompt routes the same way, under its original name
      const brief = await acme.getPrompt({ name: 'beta__acme_brief' });
      expect(brief.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'acme' } }]);
      const alphaBrief = await acme.getPrompt({ name: 'alpha__acme_brief' });
      expect(alphaBrief.messages[0]?.content).toEqual({ type: 'text', text: 'acme' });
    } finally {
      await acme.close();
    }
    // a name the caller's live list does not hold is unknown, as for any tool (contract §8)
    const modern = await connectModern(gateway.mcpUrl, 'globex');
    try {
      await expect(modern.callTool({ name: 'alpha__acme_alpha', arguments: {} })).rejects.toThrow(
        /-32602|unknown|not found/i,
      );
    } finally {
      await modern.close();
    }
  });
});

describe('live fan-out: when every source of a list failed (docs/operations.md §11 "Live lists")', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    const down = await closedPort();
    const alsoDown = await closedPort();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            live('down', `http://127.0.0.1:${down}/mcp`, {
              timeouts: { connectMillis: 200, listMillis: 1000 },
            }),
            live('also-down', `http://127.0.0.1:${alsoDown}/mcp`, {
              timeouts: { connectMillis: 200, listMillis: 1000 },
            }),
          ],
        }),
        http: { modernEra: true },
      },
      waitReady: false,
    });
    // the catalog is published once the first pulls were attempted (both fail)
    await waitFor(
      async () =>
        !/Registry unavailable/.test(
          JSON.stringify((await rpc(gateway.mcpUrl, 'tools/list')).json),
        ),
      30_000,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers a JSON-RPC error naming the failed sources, never an empty list (both eras)', async () => {
    const legacy = await rpc(gateway.mcpUrl, 'tools/list');
    expect(legacy.json.result).toBeUndefined();
    expect(legacy.json.error.code).toBe(-32603);
    expect(legacy.json.error.message).toMatch(/down/);
    expect(legacy.json.error.data).toEqual({ failedSources: ['down', 'also-down'] });

    const raw = await rpc(
      gateway.mcpUrl,
      'prompts/list',
      {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'prompts/list' },
    );
    expect(raw.json.result).toBeUndefined();
    expect(raw.json.error.code).toBe(-32603);
  });
});

describe('live fan-out: concurrency and cache hints (docs/operations.md §11 "Live lists")', () => {
  const fleet: LiveUpstream[] = [];
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    for (let i = 0; i < 10; i++)
      fleet.push(
        await LiveUpstream.start({
          stem: `u${i}`,
          listDelayMs: 300,
          // u3's answer is the shortest-lived and private: the merged hints must say so
          listHints:
            i === 3
              ? { ttlMs: 8_000, cacheScope: 'private' }
              : { ttlMs: 20_000 + i * 1000, cacheScope: 'public' },
        }),
      );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          registry: { refreshIntervalSeconds: 600 },
          upstreams: fleet.map((u, i) => live(`u${i}`, u.url, { timeouts: { listMillis: 5000 } })),
        }),
        http: { modernEra: true },
        cache: { maxTtlMillis: 60_000 },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    for (const u of fleet) await u.stop();
    await service?.stop();
  });

  it('ten live upstreams are asked at once, not one after another (their request times overlap)', async () => {
    const { tools } = await listAsV1(gateway.mcpUrl, 'overlap');
    expect(tools).toHaveLength(21);
    const asked = fleet.map((u) => u.toolLists('overlap'));
    for (const requests of asked) expect(requests).toHaveLength(1);
    const starts = asked.map((r) => r[0]!.startedAt);
    const ends = asked.map((r) => r[0]!.endedAt ?? Number.POSITIVE_INFINITY);
    // every fetch began before any had ended: all ten were in flight together
    expect(Math.max(...starts)).toBeLessThan(Math.min(...ends));
  });

  it('merged hints: the minimum ttlMs and private wins; answers are reused per caller for their ttlMs only', async () => {
    const first = await rawModernList(gateway.mcpUrl, 'cache-a');
    const fetchedAt = performance.now();
    expect(first.cacheScope).toBe('private');
    expect(first.ttlMs).toBeLessThanOrEqual(8_000);
    expect(first.ttlMs).toBeGreaterThan(0);
    expect(first.resultType).toBe('complete');
    for (const u of fleet) expect(u.toolLists('cache-a')).toHaveLength(1);

    // the same caller again within u3's 8 s: every answer from the cache
    await rawModernList(gateway.mcpUrl, 'cache-a');
    for (const u of fleet) expect(u.toolLists('cache-a')).toHaveLength(1);
    // another caller (another forwarded header) shares nothing
    await rawModernList(gateway.mcpUrl, 'cache-b');
    for (const u of fleet) expect(u.toolLists('cache-b')).toHaveLength(1);

    // once u3's 8 s have passed, u3 is asked again; the others' longer ttlMs still hold
    const left = fetchedAt + 8_100 - performance.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    await rawModernList(gateway.mcpUrl, 'cache-a');
    expect(fleet[3]!.toolLists('cache-a')).toHaveLength(2);
    expect(fleet[0]!.toolLists('cache-a')).toHaveLength(1);
  });

  it('a list only live upstreams serve takes their hints alone (no snapshot source forces 0)', async () => {
    const result = await rawModernList(gateway.mcpUrl, 'prompt-hints', 'prompts/list');
    expect((result.prompts as { name: string }[]).map((p) => p.name)).toEqual(
      fleet.map((_, i) => `u${i}__prompt-hints_brief`),
    );
    expect(result).toMatchObject({ ttlMs: 8_000, cacheScope: 'private' });
  });
});
