import Redis from 'ioredis';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { OwnRedis, uniqueKeyPrefix } from '../support/redis';
import { postRaw, rpc, type RawAnswer } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { V2MrtrUpstream } from './mrtr-upstreams';

const V = '2026-07-28';

/** A 2026-07-28 tools/call by raw HTTP (the client declares elicitation). */
function call(url: string, params: Record<string, unknown>, id: number): Promise<RawAnswer> {
  const name = 'v2__confirm_deploy';
  return postRaw(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name,
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    }),
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  );
}

/**
 * One-time use of `requestState` envelopes across replicas when Redis loses what was spent
 * (docs/operations.md §11 "One-time use"): a replica writes the envelopes it spent back when Redis
 * returns from an outage, restarts without its data, or is emptied under a live connection, so
 * the same retry replayed on another replica is still "already used" and never reaches the
 * upstream a second time.
 */
describe('spent requestState envelopes survive Redis losing them', () => {
  let own: OwnRedis;
  let v2: V2MrtrUpstream;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let keyPrefix: string;

  beforeAll(async () => {
    own = await OwnRedis.start();
    v2 = await V2MrtrUpstream.start();
    keyPrefix = uniqueKeyPrefix();
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [upstream('v2', v2.url, { timeouts: { callMillis: 30_000 } })],
        redis: { keyPrefix, commandTimeoutMillis: 300 },
      }),
      http: { modernEra: true },
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: own.url };
    [a, b] = await Promise.all([
      GatewayProcess.startPatiently({ mcp, env }),
      GatewayProcess.startPatiently({ mcp, env }),
    ]);
  }, 200_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await v2?.stop();
    await own?.stop();
  });

  /** A first call's retry on replica a, completed: its params (the spent envelope). */
  async function spentOnA(env: string, whileRedisIsDown = false): Promise<Record<string, unknown>> {
    const first = await call(a.mcpUrl, { arguments: { env } }, 1);
    expect(first.json.result.resultType).toBe('input_required');
    const params = {
      arguments: { env },
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      requestState: first.json.result.requestState,
    };
    if (whileRedisIsDown) await own.stop();
    const used = await call(a.mcpUrl, params, 2);
    expect(used.json.result.content[0].text).toBe(`deployed to ${env} (state=opaque-state-${env})`);
    return params;
  }

  /**
   * Replica a's spent nonces are in Redis again: as many as it spent so far (one per test; b
   * holds only the ones it was replayed, all of them a's too).
   */
  async function writtenBack(spentOnA: number): Promise<void> {
    const probe = new Redis(own.url, { maxRetriesPerRequest: 1 });
    try {
      await waitFor(
        async () => (await probe.keys(`${keyPrefix}:*:mrtr:spent:*`)).length >= spentOnA,
        20_000,
      );
    } finally {
      probe.disconnect();
    }
  }

  async function expectReplayRefusedOnB(params: Record<string, unknown>): Promise<void> {
    const calls = v2.calls().length;
    const replay = await call(b.mcpUrl, params, 3);
    expect(replay.json.error).toMatchObject({ code: -32602 });
    expect(replay.json.error.message).toMatch(/already used/);
    expect(v2.calls().length).toBe(calls);
  }

  it('spent before Redis restarts without its data: the replay on the other replica is refused', async () => {
    const params = await spentOnA('restart');
    await own.stop();
    await own.restart();
    await writtenBack(1);
    await expectReplayRefusedOnB(params);
  }, 60_000);

  it('spent while Redis was down: the replay on the other replica once it is back is refused', async () => {
    const params = await spentOnA('outage', true);
    await own.restart();
    await writtenBack(2);
    await expectReplayRefusedOnB(params);
  }, 60_000);

  it('spent before Redis is emptied under a live connection (FLUSHALL): the replay is refused once the replica sees it', async () => {
    const params = await spentOnA('flushed');
    const probe = new Redis(own.url, { maxRetriesPerRequest: 1 });
    try {
      await probe.flushall();
    } finally {
      probe.disconnect();
    }
    await writtenBack(3);
    await expectReplayRefusedOnB(params);
  }, 60_000);

  it("a 2025 client's answer to a bridged request that cannot reach the call's replica is 503 with Retry-After, taken when sent again, and refused (400) once answered", async () => {
    const init = await rpc(a.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': init.headers.get('mcp-session-id')!,
    };
    const stream = await SseReader.open(
      a.mcpUrl,
      'POST',
      headers,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'v2__confirm_deploy', arguments: { env: 'bridged' } },
      }),
    );
    try {
      const asked = await stream.waitForMessage((m) => m.method === 'elicitation/create');
      const answer = JSON.stringify({
        jsonrpc: '2.0',
        id: asked.id,
        result: { action: 'accept', content: { confirm: true } },
      });
      await own.stop();
      const during = await postRaw(b.mcpUrl, answer, headers);
      expect([during.status, during.headers.get('retry-after')]).toEqual([503, '2']);
      expect(during.json.error.message).toContain('send the same answer again');
      await own.restart();
      let again = await postRaw(b.mcpUrl, answer, headers);
      await waitFor(async () => {
        if (again.status === 503) again = await postRaw(b.mcpUrl, answer, headers);
        return again.status !== 503;
      }, 20_000);
      expect(again.status).toBe(202);
      const done = await stream.waitForMessage((m) => m.id === 9, 20_000);
      expect(done.result.content[0].text).toBe('deployed to bridged (state=opaque-state-bridged)');
      const late = await postRaw(b.mcpUrl, answer, headers);
      expect([late.status, late.json.error.code]).toEqual([400, -32600]);
      expect(late.json.error.message).toContain('no call waits for this answer any more');
    } finally {
      stream.close();
    }
  }, 90_000);
});
