import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { OwnRedis, redisClient, uniqueKeyPrefix } from '../support/redis';
import { rpc } from '../support/rpc';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';

/**
 * A TCP proxy in front of a real Redis. Armed, it swallows the first SUBSCRIBE a connection
 * sends and then "dies" (every connection dropped, the port refusing): a Redis that goes away
 * while a reconnected subscriber's re-SUBSCRIBE is unanswered. The window is a few
 * milliseconds wide in a real restart; the proxy makes it every time.
 */
class DyingRedisProxy {
  private server?: Server;
  port = 0;
  armed = false;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly redisPort: number) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const redis = connect(this.redisPort, '127.0.0.1');
      this.sockets.add(client).add(redis);
      redis.on('error', () => client.destroy());
      client.on('error', () => redis.destroy());
      client.on('close', () => redis.destroy());
      redis.on('close', () => client.destroy());
      redis.pipe(client);
      client.on('data', (d: Buffer) => {
        if (this.armed && /subscribe/i.test(d.toString('latin1'))) {
          this.armed = false;
          this.die();
          return;
        }
        redis.write(d);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', () => resolve()));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Every connection dropped, as in a Redis restart: the clients reconnect. */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  die(): void {
    this.server?.close();
    this.server = undefined;
    this.dropAll();
  }
}

/**
 * Redis gone while a subscriber's re-SUBSCRIBE after a reconnect is unanswered: ioredis rejects
 * its own re-SUBSCRIBE (MaxRetriesPerRequestError) with nobody awaiting it, which ended the
 * gateway process (an unhandled rejection) in one full e2e run. The gateway's subscribers
 * (MRTR input handoff, resource update bus) subscribe themselves on every connect
 * (libs/redis/src/redis-uses.ts), and a rejection nobody awaits is logged, never fatal
 * (apps/gateway/src/main.ts).
 */
describe('Redis that goes away while a subscriber resubscribes', () => {
  let own: OwnRedis;
  let v2: V2MrtrUpstream;
  let proxy: DyingRedisProxy;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    own = await OwnRedis.start();
    proxy = new DyingRedisProxy(own.port);
    await proxy.start();
    v2 = await V2MrtrUpstream.start();
    gateway = await GatewayProcess.startPatiently({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('v2', v2.url)],
          redis: { keyPrefix: uniqueKeyPrefix(), commandTimeoutMillis: 300 },
        }),
        http: { modernEra: true },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: `redis://127.0.0.1:${proxy.port}` },
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await v2?.stop();
    proxy?.die();
    await own?.stop();
  });

  it('does not end the process; the gateway serves on, and subscribes again once Redis is back', async () => {
    const probe = redisClient(own.url);
    try {
      const channels = async (): Promise<number> =>
        ((await probe.call('PUBSUB', 'CHANNELS')) as string[]).length;
      // the input handoff's and the resource update bus's channels
      await waitFor(
        async () => (await channels()) >= 2,
        20_000,
        () => 'not subscribed at start',
      );
      const subscribed = await channels();

      proxy.armed = true;
      proxy.dropAll();
      await waitFor(
        () => !proxy.armed,
        15_000,
        () => 'no subscriber sent SUBSCRIBE again',
      );
      // past the reconnect attempts that flush the pending re-SUBSCRIBE (maxRetriesPerRequest 1)
      await new Promise((r) => setTimeout(r, 3000));
      expect(gateway.exitCode).toBeNull();
      const list = await rpc(gateway.mcpUrl, 'tools/list', {});
      expect(list.json.result.tools.map((t: { name: string }) => t.name)).toContain(
        'v2__confirm_deploy',
      );

      // Redis back on the same port: every subscriber subscribes again
      await proxy.start();
      await waitFor(
        async () => (await channels()) >= subscribed,
        20_000,
        () => 'the subscribers did not subscribe again',
      );
      expect(gateway.exitCode).toBeNull();
    } finally {
      probe.disconnect();
    }
  }, 60_000);
});
