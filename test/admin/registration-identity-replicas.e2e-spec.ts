import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { stopAfterEach } from '../support/cleanup';
import { TEST_SESSION_KEYS, waitFor, type GatewayProcess } from '../support/gateway-process';
import { SseReader } from '../support/sse-reader';
import { rpc, STANDARD_HEADERS, postRaw } from '../support/rpc';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';
import {
  admin,
  ADMIN_TOKEN,
  startGateway,
  toolNames,
  waitForState,
  waitForTool,
} from './admin-support';

/**
 * docs/operations.md §15 "Deleted means gone", across replicas on one Redis: which registration
 * holds an id is the same on every replica (its createdAt and fields: a PATCH to the state it
 * has changes nothing, so a relay id sealed on one replica is delivered by another), and the
 * last good lists an earlier registration wrote to Redis never warm-start the one that holds
 * the id since (they are stored with upstreamSource: URL and registration).
 */
describe('a registration across replicas', () => {
  const track = stopAfterEach();
  const redis = redisClient();
  const keyPrefix = uniqueKeyPrefix();
  let calc: V2Upstream;
  let asker: ScriptedUpstream;
  let x: V2Upstream;
  beforeAll(async () => {
    [calc, asker, x] = await Promise.all([
      V2Upstream.start(),
      ScriptedUpstream.start({ tools: [upTool('ask')], sessionId: 'session-of-asker' }),
      V2Upstream.start(),
    ]);
    // the upstream asks the client for a PIN, then keeps the call open
    asker.onTool('ask', () => ({
      events: [
        {
          jsonrpc: '2.0',
          id: 'ask-1',
          method: 'elicitation/create',
          params: {
            message: 'Your PIN?',
            requestedSchema: { type: 'object', properties: { pin: { type: 'string' } } },
          },
        },
      ],
      eventGapMs: 20_000,
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
  });
  afterAll(async () => {
    await Promise.all([calc?.stop(), asker?.stop(), x?.stop()]);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  function replica(): Promise<GatewayProcess> {
    return startGateway(
      {
        mcp: {
          ...gatewayConfig([], {
            redis: { keyPrefix },
            registry: { refreshIntervalSeconds: 2 },
            upstreams: [upstream('calc', calc.url)],
          }),
          admin: { allowLoopback: true },
        },
        env: {
          MCP_ADMIN_TOKEN: ADMIN_TOKEN,
          REDIS_URL: SHARED_REDIS_URL,
          MCP_SESSION_KEYS: TEST_SESSION_KEYS,
          MCP_UPSTREAM_SECRET_TENANT_A: 'Bearer tenant-a',
          MCP_UPSTREAM_SECRET_TENANT_B: 'Bearer tenant-b',
        },
        waitReady: true,
      },
      track,
    );
  }

  /**
   * A 2025 session on replica `a` calls flip__ask; its client answers the relayed elicitation
   * on replica `b`. Whether the answer reached the upstream.
   */
  async function answerOnOtherReplica(a: GatewayProcess, b: GatewayProcess, pin: string) {
    const init = await rpc(a.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const stream = await SseReader.open(
      a.mcpUrl,
      'POST',
      { ...STANDARD_HEADERS, ...session },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'flip__ask', arguments: {} },
      }),
    );
    const asked = await stream.waitForMessage((m) => m?.method === 'elicitation/create', 15_000);
    const before = asker.requests.length;
    await postRaw(
      b.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: asked.id,
        result: { action: 'accept', content: { pin } },
      }),
      { ...STANDARD_HEADERS, ...session },
    );
    let delivered = false;
    await waitFor(
      () =>
        (delivered = asker.requests
          .slice(before)
          .some((r) => r.body.toString('utf8').includes(pin))),
      6_000,
      () => '',
    ).catch(() => undefined);
    return delivered;
  }

  it('a PATCH to the state the registration has changes nothing: an answer sealed on one replica is delivered by another', async () => {
    const a = await replica();
    const body = { id: 'flip', url: asker.url, protocol: '2025-11-25' };
    expect((await admin(a, 'POST', '/admin/upstreams', body)).status).toBe(202);
    await waitForState(a, 'flip', 'ACTIVE');
    expect((await admin(a, 'PATCH', '/admin/upstreams/flip', { enabled: true })).status).toBe(200);
    // b reads the record as the PATCH left it; a applied it before
    const b = await replica();
    await waitForState(b, 'flip', 'ACTIVE');
    expect(await answerOnOtherReplica(a, b, 'pin-after-patch-2')).toBe(true);
    expect(b.output).not.toMatch(/removed, replaced or disabled; dropped/);
    expect((await admin(a, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
  }, 90_000);

  it('the last good lists of an earlier registration of the id are not published for the one registered since at the same URL', async () => {
    const a = await replica();
    const post = (tenant: 'A' | 'B') =>
      admin(a, 'POST', '/admin/upstreams', {
        id: 'flip',
        url: x.url,
        authorization: { mode: 'static', valueEnv: `MCP_UPSTREAM_SECRET_TENANT_${tenant}` },
      });
    expect((await post('A')).status).toBe(202);
    await waitForTool(a, 'flip__add');
    // the copy is in Redis before the registration goes
    await waitFor(
      async () => (await redis.keys(`${keyPrefix}*upstream/flip*`)).length > 0,
      10_000,
      () => 'the lists of flip were never written to Redis',
    );
    expect((await admin(a, 'DELETE', '/admin/upstreams/flip')).status).toBe(200);
    await x.stop(); // the server behind the URL is gone (or refuses tenant B)
    expect((await post('B')).status).toBe(202);
    await waitForTool(a, 'flip__add', false);
    // a replica started now warm-starts from Redis: nothing of the earlier registration
    const b = await replica();
    // its own pull failed (the server is gone): what it publishes now is all it will
    await waitForState(b, 'flip', 'FAILED');
    expect((await toolNames(b)).filter((n) => n.startsWith('flip__'))).toEqual([]);
    expect((await toolNames(a)).filter((n) => n.startsWith('flip__'))).toEqual([]);
  }, 90_000);
});
