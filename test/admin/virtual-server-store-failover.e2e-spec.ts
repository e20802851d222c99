import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { redisUseOptions } from '@app/redis';
import { RedisServerStore } from '../../libs/mcp/src/servers/server-store';
import { waitFor } from '../support/gateway-process';
import { OwnRedis, redisClient, uniqueKeyPrefix } from '../support/redis';

/**
 * docs/operations.md §5 "What a failover may lose": replication is asynchronous, so the counter
 * a promoted replica comes over with may be below a version the old master handed out in a
 * write it never passed on. A write on the new master must not draw that version again: an
 * If-Match kept for the lost server would match another one (server-store.ts ON_MASTER).
 */
describe('registered virtual servers: versions after a failover to a replica that missed a write', () => {
  let r1: OwnRedis;
  let r2: OwnRedis;
  let c2: Redis;
  const stores: RedisServerStore[] = [];

  beforeAll(async () => {
    [r1, r2] = await Promise.all([OwnRedis.start(), OwnRedis.start()]);
    c2 = redisClient(r2.url);
    await c2.call('REPLICAOF', '127.0.0.1', String(r1.port));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    c2?.disconnect();
    await Promise.all([r1?.stop(), r2?.stop()]);
  });

  it('the new master never hands out the version of a write it lost', async () => {
    const config = {
      mcp: {
        identity: 'gw',
        redis: {
          keyPrefix: uniqueKeyPrefix(),
          commandTimeoutMillis: 2000,
          connectTimeoutMillis: 2000,
        },
      },
    } as unknown as GatewayConfig;
    const on = (url: string): RedisServerStore => {
      const store = new RedisServerStore(
        new Redis(url, redisUseOptions('virtualServers', config.mcp.redis)),
        config,
      );
      stores.push(store);
      return store;
    };
    const record = (url: string) => ({
      server: { id: 'x', tools: ['x.*'], url },
      registeredAt: new Date().toISOString(),
      registeredBy: 'op',
    });
    const old = on(r1.url);
    const w = await old.create('w', record('w'));
    expect(w.kind).toBe('written');
    const hash = `${config.mcp.redis.keyPrefix}:{gw}:virtual-servers`;
    await waitFor(async () => (await c2.hexists(hash, 'w')) === 1, 10_000);
    // the replica stops following: the next write reaches the old master only
    await c2.call('REPLICAOF', 'NO', 'ONE');
    const lost = await old.create('x', record('lost'));
    expect(lost.kind).toBe('written');
    expect(await c2.hexists(hash, 'x')).toBe(0);
    const again = await on(r2.url).create('x', record('new'));
    expect(again.kind).toBe('written');
    if (lost.kind === 'written' && again.kind === 'written')
      expect(again.version).toBeGreaterThan(lost.version);
  });
});
