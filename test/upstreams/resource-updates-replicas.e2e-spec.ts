import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const README = 'repo://readme';
const FILE = 'repo://files/a.ts';

/**
 * Resource updates across replicas (docs/operations.md §10 "Resource subscriptions"): with
 * Redis, a 2025 session that subscribed through replica A gets the upstream's
 * `notifications/resources/updated` on its GET stream held by replica B, and an unsubscribe that
 * reaches B ends A's relay of that URI. Without Redis, B's stream gets nothing (as documented).
 */
describe('resource updates across replicas', () => {
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

  async function replica(redisUrl?: string): Promise<GatewayProcess> {
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
        redis: { keyPrefix },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: redisUrl },
      waitReady: true,
    });
    started.push(gateway);
    return gateway;
  }

  async function openSession(gateway: GatewayProcess): Promise<Record<string, string>> {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'replicas', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id') as string,
      'mcp-protocol-version': '2025-11-25',
    };
    await rpc(gateway.mcpUrl, 'notifications/initialized', undefined, session);
    return session;
  }

  const updatesOf = (stream: SseReader, uri: string): number =>
    stream.messages.filter(
      (m: { method?: string; params?: { uri?: string } }) =>
        m.method === 'notifications/resources/updated' && m.params?.uri === uri,
    ).length;

  it('with Redis: subscribed through A, told on the GET stream held by B; unsubscribed through B, no longer', async () => {
    const [a, b] = [await replica(SHARED_REDIS_URL), await replica(SHARED_REDIS_URL)];
    const session = await openSession(a);
    for (const uri of [README, FILE]) {
      const subscribed = await rpc(a.mcpUrl, 'resources/subscribe', { uri }, session);
      expect(subscribed.json).toMatchObject({ result: {} });
    }
    const stream = await SseReader.open(b.mcpUrl, 'GET', {
      accept: 'text/event-stream',
      ...session,
    });
    try {
      expect(stream.status).toBe(200);
      // the stream is registered on B before the upstream speaks: repeat until one arrives
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(README);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return updatesOf(stream, README) > 0;
        },
        10_000,
        () => `B's stream got ${JSON.stringify(stream.messages)}`,
      );

      const left = await rpc(b.mcpUrl, 'resources/unsubscribe', { uri: README }, session);
      expect(left.json).toMatchObject({ result: {} });
      // A learns it through Redis: README stops while FILE, still subscribed, keeps coming
      await waitFor(
        async () => {
          const readmeBefore = updatesOf(stream, README);
          const fileBefore = updatesOf(stream, FILE);
          await repo.notifyResourceUpdated(README);
          await repo.notifyResourceUpdated(FILE);
          await stream.waitForMessage(() => updatesOf(stream, FILE) > fileBefore);
          return updatesOf(stream, README) === readmeBefore;
        },
        10_000,
        () => `README still relayed: ${JSON.stringify(stream.messages)}`,
      );
    } finally {
      stream.close();
    }
  });

  it("without Redis: B's stream is not told of a subscription made through A", async () => {
    const [a, b] = [await replica(), await replica()];
    const session = await openSession(a);
    await rpc(a.mcpUrl, 'resources/subscribe', { uri: FILE }, session);
    const onA = await SseReader.open(a.mcpUrl, 'GET', { accept: 'text/event-stream', ...session });
    const onB = await SseReader.open(b.mcpUrl, 'GET', { accept: 'text/event-stream', ...session });
    try {
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(FILE);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return updatesOf(onA, FILE) > 0;
        },
        10_000,
        () => `A's stream got ${JSON.stringify(onA.messages)}`,
      );
      expect(updatesOf(onB, FILE)).toBe(0);
    } finally {
      onA.close();
      onB.close();
    }
  });
});
