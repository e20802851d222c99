import { BalancedGateways, oneConnectionPerRequest } from '../support/balancer';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { CLIENT_KINDS, ERA_OF, connectClient, type AnyClient } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};
/** A raw 2026 request through the balancer (every request on its own connection). */
async function modern(url: string, method: string, params: Record<string, unknown> = {}) {
  const res = await oneConnectionPerRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** The merged tool list every kind of client must see: a bundle, a 2025 and a 2026 upstream. */
const ALL_TOOLS = [
  'calc__add',
  'calc__shout',
  'calc30__add',
  'calc30__shout',
  'ins.quote',
  'repo__confirm',
  'repo__flaky',
  'repo__long-task',
  'repo__needs-login',
  'repo__render',
  'repo__repo_search',
];

/**
 * docs/operations.md §11 "Several replicas": two gateway replicas sharing Redis behind a
 * round-robin TCP balancer, in front of a Tool Service bundle, a v1-SDK upstream (2025-11-25
 * sessions) and a v2-SDK upstream (2026-07-28, stateless); the v1 client and the v2 client in its
 * legacy, auto and pinned modes list and call tools of both eras, every request on a fresh
 * connection.
 */
describe('mixed eras through two replicas behind a round-robin balancer', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let calc: V2Upstream;
  let calc30: V2Upstream;
  let deployment: BalancedGateways;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    service.tools.set('ins.quote', () => ({ body: { premium: 42 } }));
    repo = await V1Upstream.start();
    // cache hints: a 60 s and a 30 s backend; on resources/list the 30 s one says private
    calc = await V2Upstream.start({
      cacheHints: {
        'tools/list': { ttlMs: 60_000, cacheScope: 'public' },
        'resources/list': { ttlMs: 60_000, cacheScope: 'public' },
      },
    });
    calc30 = await V2Upstream.start({
      cacheHints: {
        'tools/list': { ttlMs: 30_000, cacheScope: 'public' },
        'resources/list': { ttlMs: 30_000, cacheScope: 'private' },
      },
    });
    deployment = await BalancedGateways.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')], {
          // a bundle pulled every 5 minutes contributes more than 30 s for a long while
          registry: { refreshIntervalSeconds: 300 },
          upstreams: [
            // a 2025 upstream sends no hints: configured here, else it would force 0/private
            upstream('repo', repo.url, { cacheTtlMillis: 120_000, cacheScope: 'public' }),
            upstream('calc', calc.url),
            upstream('calc30', calc30.url),
          ],
        }),
      },
    });
  });

  afterAll(async () => {
    await deployment?.stop();
    await repo?.stop();
    await calc?.stop();
    await calc30?.stop();
    await service?.stop();
  });

  describe.each(CLIENT_KINDS)('the %s client', (kind) => {
    let client: AnyClient;
    beforeAll(async () => {
      client = await connectClient(kind, deployment.url, { fetch: oneConnectionPerRequest });
    });
    afterAll(async () => {
      await client?.close();
    });

    it(`speaks ${ERA_OF[kind]} and lists the tools of every source, both eras in one list`, async () => {
      const version =
        'getNegotiatedProtocolVersion' in client
          ? client.getNegotiatedProtocolVersion?.()
          : undefined;
      if (ERA_OF[kind] === '2026') expect(version).toBe(V);
      else expect(version).not.toBe(V);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(ALL_TOOLS);
    });

    it('calls a bundle tool, a 2025 upstream tool and a 2026 upstream tool', async () => {
      const bundleResult = await client.callTool({ name: 'ins.quote', arguments: {} });
      expect(JSON.stringify(bundleResult.content)).toContain('42');
      const v1Result = await client.callTool({
        name: 'repo__repo_search',
        arguments: { query: 'mixed' },
      });
      expect(v1Result.isError).toBeFalsy();
      expect(JSON.stringify(v1Result.content)).toContain('mixed');
      const v2Result = await client.callTool({ name: 'calc__add', arguments: { a: 2, b: 3 } });
      expect(v2Result.structuredContent).toEqual({ sum: 5 });
    });
  });

  it('spreads connections over both replicas', () => {
    expect(deployment.balancer.connections.every((n) => n > 0)).toBe(true);
  });

  it('a raw 2026 tools/list lands on either replica and answers the same bytes', async () => {
    const first = await modern(deployment.url, 'tools/list');
    const second = await modern(deployment.url, 'tools/list');
    expect(first.status).toBe(200);
    expect(second.json.result.tools).toEqual(first.json.result.tools);
    expect(first.json.result.resultType).toBe('complete');
  });

  it('cache hints: a 60 s and a 30 s backend merge to 30 s, public, on every replica', async () => {
    for (let i = 0; i < 4; i++) {
      const list = await modern(deployment.url, 'tools/list');
      expect(list.status).toBe(200);
      expect(list.json.result).toMatchObject({ ttlMs: 30_000, cacheScope: 'public' });
    }
  });

  it('cache hints: one private contributor makes the merged list private', async () => {
    const list = await modern(deployment.url, 'resources/list');
    expect(list.status).toBe(200);
    expect(list.json.result.resources.map((r: { uri: string }) => r.uri)).toContain(
      'calc://constants/pi',
    );
    expect(list.json.result).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
  });

  it('cache hints: a 2025 upstream without configured hints contributes 0 and private', async () => {
    const unconfigured = await BalancedGateways.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('repo', repo.url), upstream('calc', calc.url)],
      }),
      count: 1,
    });
    try {
      const list = await modern(unconfigured.url, 'tools/list');
      expect(list.json.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    } finally {
      await unconfigured.stop();
    }
  });
});
