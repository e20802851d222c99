import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { LOST_RANGES_KEPT, LOST_RANGES_LUA, redisUseOptions } from '@app/redis';
import { RedisRegistrationStore, type NewRegistration } from '@app/registrations';
import { RedisServerStore } from '../../libs/mcp/src/servers/server-store';
import { waitFor } from '../support/gateway-process';
import { OwnRedis, SHARED_REDIS_URL, redisClient, uniqueKeyPrefix } from '../support/redis';

/**
 * docs/operations.md §5 "What a failover may lose": replication is asynchronous, so the counter
 * a promoted replica comes over with may be below a version the old master handed out in a
 * write it never passed on. A write on the new master must not draw that version again: an
 * If-Match kept for the lost server would match another one (server-store.ts ON_MASTER). And a
 * write lost so is still told from a deleted one after a second failover: each new master keeps
 * the ranges of the masters before it (registration-store-scripts.ts SEED).
 */
describe('registered virtual servers and upstreams: versions after failovers to replicas that missed a write', () => {
  const servers: OwnRedis[] = [];
  const clients: Redis[] = [];
  const stores: { close(): Promise<void> }[] = [];

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    for (const c of clients) c.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  });

  interface Node {
    readonly url: string;
    readonly client: Redis;
  }

  /**
   * `n` redis-servers, each a replica of the one before (the first the master) and in sync with
   * it, and clients. A full sync starts at once (Redis waits 5 s by default for more replicas)
   * and is read from the socket, not through a dump.rdb in the working directory.
   */
  async function chain(n: number): Promise<Node[]> {
    const started = await Promise.all(Array.from({ length: n }, () => OwnRedis.start()));
    servers.push(...started);
    const made: Node[] = [];
    let before: OwnRedis | undefined;
    for (const s of started) {
      const client = redisClient(s.url);
      clients.push(client);
      await client.call('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
      await client.call('CONFIG', 'SET', 'repl-diskless-load', 'on-empty-db');
      if (before !== undefined) {
        await client.call('REPLICAOF', '127.0.0.1', String(before.port));
        await waitFor(
          async () =>
            /master_link_status:up/.test(String(await client.call('INFO', 'replication'))),
          30_000,
          () => `redis-server on ${s.port} never synced with its master`,
        );
      }
      made.push({ url: s.url, client });
      before = s;
    }
    return made;
  }

  const configOf = (): GatewayConfig =>
    ({
      mcp: {
        identity: 'gw',
        redis: {
          keyPrefix: uniqueKeyPrefix(),
          commandTimeoutMillis: 2000,
          connectTimeoutMillis: 2000,
        },
      },
    }) as unknown as GatewayConfig;

  it('the new master never hands out the version of a write it lost', async () => {
    const [r1, r2] = (await chain(2)) as [Node, Node];
    const config = configOf();
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
    await waitFor(async () => (await r2.client.hexists(hash, 'w')) === 1, 10_000);
    // the replica stops following: the next write reaches the old master only
    await r2.client.call('REPLICAOF', 'NO', 'ONE');
    const lost = await old.create('x', record('lost'));
    expect(lost.kind).toBe('written');
    expect(await r2.client.hexists(hash, 'x')).toBe(0);
    const again = await on(r2.url).create('x', record('new'));
    expect(again.kind).toBe('written');
    if (lost.kind === 'written' && again.kind === 'written')
      expect(again.version).toBeGreaterThan(lost.version);
  });

  it('two failovers in a row, each new master written to: a registration and a virtual server lost in the first are still written back by a replica that reads after the second, deleted ones are not', async () => {
    // r1 → r2 → r3: r3 follows r2, and keeps following it when r2 is promoted
    const [r1, r2, r3] = (await chain(3)) as [Node, Node, Node];
    const config = configOf();
    const on = (url: string): RedisRegistrationStore => {
      const store = new RedisRegistrationStore(
        new Redis(url, redisUseOptions('registrations', config.mcp.redis)),
        config,
      );
      stores.push(store);
      return store;
    };
    const record = (id: string): NewRegistration => ({
      upstream: {
        id,
        url: `http://10.0.0.9/${id}`,
        enabled: true,
        forwardHeaders: [],
      } as unknown as NewRegistration['upstream'],
      createdAt: 1,
      updatedAt: 1,
      createdBy: 'admin-token',
      updatedBy: 'admin-token',
    });
    const serversOn = (url: string): RedisServerStore => {
      const store = new RedisServerStore(
        new Redis(url, redisUseOptions('virtualServers', config.mcp.redis)),
        config,
      );
      stores.push(store);
      return store;
    };
    const server = (id: string) => ({
      server: { id, tools: [`${id}.*`] },
      registeredAt: new Date().toISOString(),
      registeredBy: 'op',
    });
    const hash = `${config.mcp.redis.keyPrefix}:{gw}:admin:upstreams`;
    const serversHash = `${config.mcp.redis.keyPrefix}:{gw}:virtual-servers`;
    const old = on(r1.url);
    const oldServers = serversOn(r1.url);
    const { generation } = await old.seed(undefined, []);
    expect((await old.create(record('w'), generation, 100)).kind).toBe('created');
    expect((await oldServers.create('vw', server('vw'))).kind).toBe('written');
    // d is registered and deleted before the failovers (its tombstone gone by the time a
    // replica that still applies it reads the store: expired), vd too
    expect((await old.create(record('d'), generation, 100)).kind).toBe('created');
    const d = (await old.read()).registrations.find((r) => r.upstream.id === 'd');
    expect((await old.remove('d', undefined, generation)).kind).toBe('removed');
    await r1.client.hdel(`${hash}:tombstones`, 'd');
    expect((await oldServers.create('vd', server('vd'))).kind).toBe('written');
    const vd = (await oldServers.read())?.servers.get('vd');
    expect((await oldServers.remove('vd', undefined)).kind).toBe('written');
    await waitFor(async () => (await r3.client.hexists(hash, 'w')) === 1, 10_000);
    await waitFor(async () => (await r3.client.hexists(`${hash}:tombstones`, 'd')) === 0, 10_000);
    await waitFor(async () => (await r3.client.hexists(serversHash, 'vd')) === 0, 10_000);
    const seenOnR1 = (await old.read()).server;
    expect(seenOnR1).toBeDefined();
    expect((await oldServers.read())?.server).toBe(seenOnR1);

    // first failover: r2 stops following; x and vx are acknowledged by r1 only
    await r2.client.call('REPLICAOF', 'NO', 'ONE');
    expect((await old.create(record('x'), generation, 100)).kind).toBe('created');
    const x = (await old.read()).registrations.find((r) => r.upstream.id === 'x');
    expect(await r2.client.hexists(hash, 'x')).toBe(0);
    expect((await oldServers.create('vx', server('vx'))).kind).toBe('written');
    const vx = (await oldServers.read())?.servers.get('vx');
    expect(await r2.client.hexists(serversHash, 'vx')).toBe(0);
    // another replica writes on r2 (its first write there notes r2 and raises the counter)
    expect((await on(r2.url).create(record('y'), generation, 100)).kind).toBe('created');
    expect((await serversOn(r2.url).create('vy', server('vy'))).kind).toBe('written');
    await waitFor(async () => (await r3.client.hexists(hash, 'y')) === 1, 10_000);
    await waitFor(async () => (await r3.client.hexists(serversHash, 'vy')) === 1, 10_000);

    // second failover, before the replica that registered x has read r2: r3 stops following,
    // and another replica writes there too
    await r3.client.call('REPLICAOF', 'NO', 'ONE');
    const onR3 = on(r3.url);
    const serversOnR3 = serversOn(r3.url);
    expect((await onR3.create(record('z'), generation, 100)).kind).toBe('created');
    expect((await serversOnR3.create('vz', server('vz'))).kind).toBe('written');

    // the replica that registered x and vx (and still applies d and vd) reads r3: the same
    // marker on another master (RegistrationStoreReader.restore, VirtualServerRegistrations)
    const found = await onR3.read();
    expect(found.generation).toBe(generation);
    expect(found.server).not.toBe(seenOnR1);
    const restored = await onR3.seed(generation, [x!, d!], [], 'restore');
    const after = await onR3.read();
    const vxBack = await serversOnR3.restore('vx', vx!, 'failover');
    const vdBack = await serversOnR3.restore('vd', vd!, 'failover');
    const serversAfter = (await serversOnR3.read())?.servers;
    expect({
      written: restored.written,
      x: after.registrations.find((r) => r.upstream.id === 'x')?.version,
      d: after.registrations.some((r) => r.upstream.id === 'd'),
      vxBack: vxBack.kind,
      vx: serversAfter?.get('vx')?.version,
      vdBack: vdBack.kind,
      vd: serversAfter?.has('vd'),
    }).toEqual({
      written: 1,
      x: x!.version,
      d: false,
      vxBack: 'written',
      vx: vx!.version,
      vdBack: 'missing',
      vd: false,
    });
  });

  it(`keeps the lost ranges of the last ${LOST_RANGES_KEPT} masters, and reads a store's older floor and ceiling`, async () => {
    const redis = redisClient(SHARED_REDIS_URL);
    clients.push(redis);
    const script = `${LOST_RANGES_LUA}
local kept = lostRangesOf(false, '5', '10')
local legacy = kept
for i = 1, ${LOST_RANGES_KEPT} do kept = lostRangesAdd(kept, i * 100, i * 100 + 50) end
local function has(v) if inLostRanges(v, kept) then return 1 end return 0 end
return {legacy, lostRangesOf('1:2', '1', '2'), lostRangesOf('1:2', '3', '4'), kept,
  has(7), has(150), has(151), has(850), has(851), has(100)}`;
    const [legacy, same, added, kept, ...found] = (await redis.eval(script, 0)) as [
      string,
      string,
      string,
      string,
      ...number[],
    ];
    expect({ legacy, same, added, kept, found }).toEqual({
      legacy: '5:10',
      same: '1:2',
      added: '1:2,3:4',
      kept: Array.from(
        { length: LOST_RANGES_KEPT },
        (_, i) => `${(i + 1) * 100}:${(i + 1) * 100 + 50}`,
      ).join(','),
      // the oldest (5:10) dropped: a ninth master's range pushed it out
      found: [0, 1, 0, 1, 0, 0],
    });
  });
});
