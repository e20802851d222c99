import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const README = 'repo://readme';
const FILE = 'repo://files/a.ts';

interface Seen {
  readonly id?: unknown;
  readonly method?: string;
  readonly params?: { readonly uri?: string };
  readonly result?: unknown;
}

/**
 * A hostile publisher on the replicas' Redis (anyone who can PUBLISH there, without the
 * gateway's MCP_SESSION_KEYS) writes on `<keyPrefix>:{<identity>}:resource-updates`
 * (docs/operations.md §10 "Resource subscriptions"; docs/security.md "Update work"): junk,
 * truncated JSON, and messages shaped like a replica's that name a real session — a JSON-RPC
 * response and a server request for its GET stream, an update of a URI it never subscribed
 * to, and a `forget` of the subscription it holds. None of it reaches the session's stream,
 * none of it ends its subscription, and the replicas' own updates still cross.
 */
describe('a hostile publisher on the resource-update channel', () => {
  let repo: V1Upstream;
  const keyPrefix = uniqueKeyPrefix();
  const started: GatewayProcess[] = [];

  beforeAll(async () => {
    repo = await V1Upstream.start({}, { subscribable: true });
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await repo?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  async function replica(): Promise<GatewayProcess> {
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
        redis: { keyPrefix },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL },
      waitReady: true,
    });
    started.push(gateway);
    return gateway;
  }

  const updatesOf = (stream: SseReader, uri: string): number =>
    (stream.messages as Seen[]).filter(
      (m) => m.method === 'notifications/resources/updated' && m.params?.uri === uri,
    ).length;

  it('drops junk and forged messages naming a session, and keeps relaying the real updates', async () => {
    const [a, b] = [await replica(), await replica()];
    const init = await rpc(a.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'hostile-bus', version: '1' },
    });
    const sessionId = init.headers.get('mcp-session-id') as string;
    const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    await rpc(a.mcpUrl, 'notifications/initialized', undefined, session);
    expect(await rpc(a.mcpUrl, 'resources/subscribe', { uri: README }, session)).toMatchObject({
      json: { result: {} },
    });
    const stream = await SseReader.open(b.mcpUrl, 'GET', {
      accept: 'text/event-stream',
      ...session,
    });
    const hostile = redisClient();
    try {
      expect(stream.status).toBe(200);
      // the channel is there once both replicas subscribed to it
      let channel = '';
      await waitFor(
        async () => {
          const channels = (await hostile.pubsub(
            'CHANNELS',
            `${keyPrefix}:*:resource-updates`,
          )) as string[];
          channel = channels[0] ?? '';
          return (
            channel !== '' &&
            ((await hostile.pubsub('NUMSUB', channel)) as [string, number])[1] >= 2
          );
        },
        10_000,
        () => 'the replicas did not subscribe to the resource-update channel',
      );
      // the real path works first: subscribed through A, told on B's stream
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(README);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return updatesOf(stream, README) > 0;
        },
        10_000,
        () => `B's stream got ${JSON.stringify(stream.messages)}`,
      );
      const before = stream.messages.length;

      const deliver = (message: unknown): string =>
        JSON.stringify({
          from: 'hostile',
          body: {
            op: 'deliver',
            sessions: [sessionId],
            sourceId: 'repo',
            message: JSON.stringify(message),
          },
        });
      const forged = [
        'not json',
        '{"from":"hostile","body":{"op":"deliver","sessions":[',
        JSON.stringify({ from: 'hostile', body: null }),
        // a response for the client's request ids on its GET stream
        deliver({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'forged' }] } }),
        // a request the gateway never made
        deliver({
          jsonrpc: '2.0',
          id: 'forged-1',
          method: 'sampling/createMessage',
          params: { messages: [], maxTokens: 1 },
        }),
        // an update of a URI the session never subscribed to
        deliver({
          jsonrpc: '2.0',
          method: 'notifications/resources/updated',
          params: { uri: FILE },
        }),
        // the session's own subscription ended by someone else
        JSON.stringify({
          from: 'hostile',
          body: { op: 'forget', session: sessionId, upstreamId: 'repo', uri: README },
        }),
      ];
      for (const text of forged) await hostile.publish(channel, text);

      // the real update still crosses after all of it (the forget did not end A's relay), and
      // it is the only thing the stream got since
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(README);
          await new Promise((resolve) => setTimeout(resolve, 200));
          return updatesOf(stream, README) > 1;
        },
        15_000,
        () => `no real update after the forged ones: ${JSON.stringify(stream.messages)}`,
      );
      const since = (stream.messages as Seen[]).slice(before);
      expect(since.filter((m) => m.params?.uri !== README || m.id !== undefined)).toEqual([]);
      expect(updatesOf(stream, FILE)).toBe(0);
      // the gateways said what they dropped (B dropped the deliveries, A the forget)
      await b.waitForOutput(/resource-update channel/);
      // and counted them, every one (the line is written once a minute)
      const dropped = async (g: GatewayProcess): Promise<number> =>
        g.metricValue('mcp_gateway_bus_messages_dropped_total{channel="resource_updates"}');
      expect((await dropped(a)) + (await dropped(b))).toBeGreaterThanOrEqual(forged.length);
      expect(a.exitCode).toBeNull();
      expect(b.exitCode).toBeNull();
    } finally {
      stream.close();
      hostile.disconnect();
    }
  });
});
