import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { redisClient, SHARED_REDIS_URL, deleteKeys, uniqueKeyPrefix } from '../support/redis';
import { postRaw, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

// Several tests start gateways (up to three) in their body: a loaded machine's bound.
jest.setTimeout(180_000);

/**
 * Values the gateway must never write to a log line (docs/security.md "What is logged"; contract
 * §10).
 */
const CALLER_AUTHORIZATION = 'Bearer caller-secret-4b1d9e';
const EMPLOYEE_NO = 'E-PERSONAL-70431';
const VIRTUAL_EMPLOYEE_NO = 'V-PERSONAL-11872';
const PERSONAL = { 'employee-no': EMPLOYEE_NO, 'virtual-employee-no': VIRTUAL_EMPLOYEE_NO };

/** The audit lines of a gateway's stdout (docs/operations.md §14 "Audit"). */
function auditLines(gateway: GatewayProcess): Record<string, unknown>[] {
  return gateway.stdout
    .split('\n')
    .filter((line) => line.includes('"audit":"tools/call"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function expectNoSecretIn(gateway: GatewayProcess): void {
  for (const secret of ['caller-secret-4b1d9e', EMPLOYEE_NO, VIRTUAL_EMPLOYEE_NO])
    expect(gateway.output).not.toContain(secret);
}

describe('audit line per tool call and passthrough only where configured (docs/operations.md §14)', () => {
  let service: TestToolService;
  let calc: V2Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('ops', [tool({ name: 'ops.echo' }), tool({ name: 'ops.fail' })]),
    );
    service.tools.set('ops.fail', () => ({ status: 500, body: { error: 'boom' } }));
    calc = await V2Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ops', service, 'ops.')], {
        upstreams: [upstream('calc', calc.url)],
      }),
      env: { LOG_LEVEL: 'info' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await calc?.stop();
    await service?.stop();
  });

  it('passes the caller Authorization only to the source configured passthrough; never to others', async () => {
    // a second Tool Service whose bundle opts in to passthrough
    const passService = await TestToolService.start(
      manifest('pass', [tool({ name: 'pass.echo' })]),
    );
    const second = await GatewayProcess.start({
      mcp: gatewayConfig(
        [
          bundle('ops', service, 'ops.'),
          bundle('pass', passService, 'pass.', { authorization: { mode: 'passthrough' } }),
        ],
        { upstreams: [upstream('calc', calc.url)] },
      ),
      waitReady: true,
    });
    try {
      const headers = { authorization: CALLER_AUTHORIZATION, ...PERSONAL };
      for (const name of ['ops.echo', 'pass.echo', 'calc__add'])
        expect(
          (await rpc(second.mcpUrl, 'tools/call', { name, arguments: { a: 1, b: 2 } }, headers))
            .status,
        ).toBe(200);
      const toPass = passService.requests.filter((r) => r.method === 'POST');
      const toOps = service.requests.filter((r) => r.method === 'POST');
      expect(toPass.at(-1)?.headers.authorization).toBe(CALLER_AUTHORIZATION);
      expect(toOps.at(-1)?.headers.authorization).toBeUndefined();
      // the contract's caller headers keep reaching bundles
      expect(toOps.at(-1)?.headers['employee-no']).toBe(EMPLOYEE_NO);
      const calls = calc.requestsFor('tools/call');
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calc.requests) expect(call.headers.authorization).toBeUndefined();
      expectNoSecretIn(second);
    } finally {
      await second.stop();
      await passService.stop();
    }
  });

  it('writes one audit line per call, bundle and upstream alike, with outcome and duration and no secret', async () => {
    const headers = { authorization: CALLER_AUTHORIZATION, ...PERSONAL, 'x-request-id': 'req-a1' };
    const before = auditLines(gateway).length;
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'ops.echo', arguments: { q: 1 } }, headers);
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'ops.fail', arguments: {} }, headers);
    await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'calc__add', arguments: { a: 2, b: 3 } },
      headers,
    );
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'nope.missing', arguments: {} }, headers);
    await rpc(gateway.mcpUrl, 'tools/list', {}, headers);
    await waitFor(() => auditLines(gateway).length >= before + 4, 10_000);
    const lines = auditLines(gateway).slice(before);
    expect(lines).toHaveLength(4);
    expect(lines.map((l) => [l.tool, l.source, l.outcome, l.errorCode ?? null])).toEqual([
      ['ops.echo', 'ops', 'ok', null],
      ['ops.fail', 'ops', 'isError', null],
      ['calc__add', 'calc', 'ok', null],
      ['nope.missing', null, 'error', 'tool_not_found'],
    ]);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 'info', subject: null, requestId: 'req-a1' });
      expect(typeof line.durationMs).toBe('number');
      expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
    }
    expectNoSecretIn(gateway);
  });
});

describe('rate limits per caller (docs/operations.md §14 "Rate limits per caller")', () => {
  let service: TestToolService;
  const gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('ops', [tool({ name: 'ops.echo' }), tool({ name: 'ops.other' })]),
    );
  });

  afterAll(async () => {
    for (const g of gateways) await g.stop();
    await service?.stop();
  });

  async function start(
    rateLimits: Record<string, unknown>,
    env: Record<string, string> = {},
    redis?: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): Promise<GatewayProcess> {
    const mcp = {
      ...gatewayConfig([bundle('ops', service, 'ops.')], redis === undefined ? {} : { redis }),
      rateLimits,
      ...extra,
    };
    const g = await GatewayProcess.start({
      mcp,
      env: { LOG_LEVEL: 'info', ...env },
      waitReady: true,
    });
    gateways.push(g);
    return g;
  }

  it('perTool: past the burst a call is HTTP 429 with Retry-After and data.retryAfterSeconds; other tools still pass; audited as limited', async () => {
    const g = await start({ perTool: { capacity: 2, refillPerSecond: 0.05 } });
    const call = (name: string): ReturnType<typeof rpc> =>
      rpc(g.mcpUrl, 'tools/call', { name, arguments: {} }, { 'x-request-id': 'rl-1' });
    expect((await call('ops.echo')).status).toBe(200);
    expect((await call('ops.echo')).status).toBe(200);
    const limited = await call('ops.echo');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(limited.json).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -31429,
        message: expect.stringMatching(/^Rate limit hit: .* retry after \d+ s$/),
        data: { retryAfterSeconds: retryAfter, limit: 'perTool' },
      },
    });
    expect((await call('ops.other')).status).toBe(200);
    // tools/list is no tool call: perTool never applies to it
    for (let i = 0; i < 4; i++) expect((await rpc(g.mcpUrl, 'tools/list', {})).status).toBe(200);
    await waitFor(() => g.stdout.includes('"outcome":"limited"'), 10_000);
    const limitedLines = auditLines(g).filter((l) => l.outcome === 'limited');
    expect(limitedLines).toEqual([
      expect.objectContaining({ tool: 'ops.echo', source: 'ops', errorCode: 'rate_limited' }),
    ]);
    // the refused call never reached the Tool Service
    expect(
      service.requests.filter((r) => r.path.endsWith('/ops.echo')).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('a 2026-07-28 request past the limit gets the same 429, Retry-After and -31429', async () => {
    const mcp = {
      ...gatewayConfig([bundle('ops', service, 'ops.')]),
      http: { modernEra: true },
      rateLimits: { perTool: { capacity: 1, refillPerSecond: 0.05 } },
    };
    const g = await GatewayProcess.start({ mcp, waitReady: true });
    gateways.push(g);
    const V = '2026-07-28';
    const call = (): ReturnType<typeof postRaw> =>
      postRaw(
        g.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'm1',
          method: 'tools/call',
          params: {
            name: 'ops.echo',
            arguments: {},
            _meta: {
              'io.modelcontextprotocol/protocolVersion': V,
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            },
          },
        }),
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': V,
          'mcp-method': 'tools/call',
          'mcp-name': 'ops.echo',
        },
      );
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.json.result.resultType).toBe('complete');
    const limited = await call();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.json).toMatchObject({
      id: 'm1',
      error: { code: -31429, data: { limit: 'perTool' } },
    });
  });

  it('perSubject: every /mcp request of the caller counts; the management port never does', async () => {
    const g = await start({ perSubject: { capacity: 3, refillPerSecond: 0.05 } });
    expect((await rpc(g.mcpUrl, 'tools/list', {})).status).toBe(200);
    expect((await rpc(g.mcpUrl, 'ping', {})).status).toBe(200);
    expect((await rpc(g.mcpUrl, 'tools/call', { name: 'ops.echo', arguments: {} })).status).toBe(
      200,
    );
    const limited = await rpc(g.mcpUrl, 'tools/list', {});
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: -31429, data: { limit: 'perSubject' } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${g.managementUrl}/actuator/health/readiness`);
      expect(res.status).toBe(200);
    }
  });

  it('store redis: two replicas share one bucket; with Redis gone they count in memory, with a warning', async () => {
    const keyPrefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const limits = { perSubject: { capacity: 4, refillPerSecond: 0.05 }, store: 'redis' };
      const env = { REDIS_URL: SHARED_REDIS_URL };
      const a = await start(limits, env, { keyPrefix });
      const b = await start(limits, env, { keyPrefix });
      const statuses: number[] = [];
      for (const g of [a, b, a, b, a, b]) statuses.push((await rpc(g.mcpUrl, 'ping', {})).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      expect((await redis.keys(`${keyPrefix}:*ratelimit*`)).length).toBe(1);

      // a replica whose Redis is unreachable keeps limiting, in its own memory
      const lonely = await start(limits, { REDIS_URL: 'redis://127.0.0.1:1' }, { keyPrefix });
      const own: number[] = [];
      for (let i = 0; i < 5; i++) own.push((await rpc(lonely.mcpUrl, 'ping', {})).status);
      expect(own).toEqual([200, 200, 200, 200, 429]);
      expect(lonely.output).toContain('rate limits now count per replica in memory');
    } finally {
      await deleteKeys(redis, keyPrefix);
      redis.disconnect();
    }
  });

  it('perTool in Redis: only tools the caller may call get a bucket; made-up names leave no key and are never limited as a tool', async () => {
    const keyPrefix = uniqueKeyPrefix();
    const redis = redisClient();
    try {
      const g = await start(
        { perTool: { capacity: 2, refillPerSecond: 0.001 }, store: 'redis' },
        { REDIS_URL: SHARED_REDIS_URL },
        { keyPrefix },
        { toolSearch: { enabled: true } },
      );
      const call = (name: string) => rpc(g.mcpUrl, 'tools/call', { name, arguments: {} });
      const madeUp = await Promise.all(Array.from({ length: 50 }, (_, i) => call(`ops.nope-${i}`)));
      for (const answer of madeUp) expect(answer.json.error?.message).toMatch(/^Tool not found/);
      // made-up names of the gateway's own tools alike
      for (let i = 0; i < 3; i++)
        expect((await call('gateway__made_up')).json.error.message).toMatch(/^Tool not found/);
      // the same made-up name past the capacity: still "not found", never 429
      for (let i = 0; i < 3; i++)
        expect((await call('ops.nope-0')).json.error.message).toMatch(/^Tool not found/);
      expect(await redis.keys(`${keyPrefix}:*ratelimit*`)).toEqual([]);
      expect((await call('ops.echo')).status).toBe(200);
      expect(await redis.keys(`${keyPrefix}:*ratelimit*`)).toHaveLength(1);
    } finally {
      await deleteKeys(redis, keyPrefix);
      redis.disconnect();
    }
  });
});
