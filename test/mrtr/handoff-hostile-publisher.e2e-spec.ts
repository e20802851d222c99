import type Redis from 'ioredis';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { postRaw } from '../support/rpc';
import { V1AskingUpstream } from './mrtr-upstreams';

const V = '2026-07-28';

function modernCall(url: string, id: number, params: Record<string, unknown>) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'v1__approve',
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      },
    },
  });
  return postRaw(url, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': 'tools/call',
    'mcp-name': 'v1__approve',
  });
}

/**
 * A retry that lands on the replica not holding its parked call crosses to the holder on Redis
 * pub/sub (docs/operations.md §11 "Multi round-trip and era bridging"). Anyone else who can
 * SUBSCRIBE and PUBLISH on that Redis (without MCP_SESSION_KEYS) sees nothing of the client's
 * answers there, and cannot answer the retry in the holder's place: the caller gets the
 * upstream's result, not one a hostile publisher made up.
 */
describe('a hostile publisher on the replicas’ handoff channels', () => {
  let asking: V1AskingUpstream;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let hostileIn: Redis;
  let hostileOut: Redis;
  const keyPrefix = uniqueKeyPrefix();
  const seen: string[] = [];
  const channels = new Set<string>();

  beforeAll(async () => {
    asking = await V1AskingUpstream.start();
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [upstream('v1', asking.url, { timeouts: { callMillis: 30_000 } })],
        redis: { keyPrefix },
      }),
      http: { modernEra: true },
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
    const replicas = await Promise.all(
      [0, 1].map(async () => {
        const gateway = GatewayProcess.spawn({ mcp, env });
        await gateway.waitForListening(90_000);
        await gateway.waitForReady(90_000);
        return gateway;
      }),
    );
    a = replicas[0]!;
    b = replicas[1]!;
    hostileIn = redisClient();
    hostileOut = redisClient();
    // answers every resume it can read with a result of its own, before the holder can
    hostileIn.on('pmessage', (_pattern: string, channel: string, text: string) => {
      seen.push(text);
      channels.add(channel);
      let message: { op?: string; corr?: string; replyTo?: string };
      try {
        message = JSON.parse(text) as typeof message;
      } catch {
        return;
      }
      if (message.op !== 'resume') return;
      const replies = `${channel.slice(0, channel.lastIndexOf(':') + 1)}${message.replyTo}`;
      const forged = {
        kind: 'result',
        value: { content: [{ type: 'text', text: 'forged' }], resultType: 'complete' },
      };
      void hostileOut.publish(replies, JSON.stringify({ op: 'ack', corr: message.corr }));
      void hostileOut.publish(
        replies,
        JSON.stringify({ op: 'reply', corr: message.corr, value: forged }),
      );
    });
    await hostileIn.psubscribe(`${keyPrefix}:*:mrtr:*`);
  }, 200_000);

  afterAll(async () => {
    hostileIn?.disconnect();
    hostileOut?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
    await asking?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it("gets the upstream's result for a retry through the other replica; Redis carries no answer in the clear", async () => {
    const first = await modernCall(a.mcpUrl, 1, { arguments: { question: 'Ship it?' } });
    const result = first.json.result;
    expect(result.resultType).toBe('input_required');
    const [key] = Object.keys(result.inputRequests as Record<string, unknown>);
    const retry = await modernCall(b.mcpUrl, 2, {
      arguments: { question: 'Ship it?' },
      inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
      requestState: result.requestState,
    });
    expect(retry.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'approve={"action":"accept","content":{"approve":true}}' }],
    });
    // the resume crossed Redis (the hostile subscriber saw it), sealed
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((text) => text.includes('"action":"accept"'))).toEqual([]);
  });

  it('drops what anyone else publishes on the retry channels, and counts it in a metric', async () => {
    expect(channels.size).toBeGreaterThan(0);
    const dropped = async (): Promise<number> =>
      (await a.metricValue('mcp_gateway_bus_messages_dropped_total{channel="handoff"}')) +
      (await b.metricValue('mcp_gateway_bus_messages_dropped_total{channel="handoff"}'));
    const before = await dropped();
    for (const channel of channels)
      for (const text of ['junk', JSON.stringify({ op: 'reply', corr: 'x', value: 1 })])
        await hostileOut.publish(channel, text);
    await waitFor(async () => (await dropped()) >= before + 2 * channels.size, 10_000);
    expect(a.exitCode).toBeNull();
    expect(b.exitCode).toBeNull();
  });
});
