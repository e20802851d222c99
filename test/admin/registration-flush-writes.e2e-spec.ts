import type Redis from 'ioredis';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { OwnRedis, redisClient, uniqueKeyPrefix } from '../support/redis';
import { ADMIN_TOKEN, admin } from './admin-support';

const hashOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

/** docs/operations.md §15 "When Redis comes back empty": writes that meet the emptied store first. */
describe('writes right after FLUSHALL, before any replica re-seeded', () => {
  const keyPrefix = uniqueKeyPrefix();
  let own: OwnRedis;
  let client: Redis;
  let s1: V2Upstream;
  let s2: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  const replica = async (): Promise<GatewayProcess> => {
    const g = GatewayProcess.spawn({
      mcp: gatewayConfig([], {
        redis: { keyPrefix },
        // reads every 30 s: the writes below meet the flushed store before any periodic read
        registry: { refreshIntervalSeconds: 60 },
        upstreams: [upstream('calc', s1.url)],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: own.url },
    });
    await g.waitForListening(60_000);
    return g;
  };

  beforeAll(async () => {
    own = await OwnRedis.start();
    client = redisClient(own.url);
    [s1, s2] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
    a = await replica();
    b = await replica();
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([s1?.stop(), s2?.stop()]);
    client?.disconnect();
    await own?.stop();
  });

  it('an overlapping prefix posted on the other replica right after the flush is 409; a DELETE right after the flush stays a deletion on both', async () => {
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'r1', url: s2.url })).status).toBe(
      202,
    );
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'r2', url: s2.url })).status).toBe(
      202,
    );
    // b learns them on a write-triggered read: a conditional DELETE of an unknown id reads the store
    await admin(b, 'DELETE', '/admin/upstreams/nope', undefined, ADMIN_TOKEN, { 'if-match': '*' });
    expect((await admin(b, 'GET', '/admin/upstreams/r1')).status).toBe(200);

    await client.flushall();
    const overlapping = await admin(b, 'POST', '/admin/upstreams', {
      id: 'q',
      url: s2.url,
      namePrefix: 'r1__x',
    });
    expect(overlapping.status).toBe(409);

    await client.flushall();
    expect((await admin(b, 'DELETE', '/admin/upstreams/r2')).status).toBe(200);
    // a re-seeds on its next write (its store read is 30 s away): r2 must not come back
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'r3', url: s2.url })).status).toBe(
      202,
    );
    await waitFor(async () => (await client.hexists(hashOf(keyPrefix), 'r3')) === 1, 10_000);
    expect(await client.hexists(hashOf(keyPrefix), 'r2')).toBe(0);
    expect(await client.hexists(hashOf(keyPrefix), 'r1')).toBe(1);
    expect((await admin(a, 'GET', '/admin/upstreams/r2')).status).toBe(404);
  });
});
