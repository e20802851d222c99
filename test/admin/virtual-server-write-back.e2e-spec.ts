import 'reflect-metadata';
import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { VirtualServerRegistrations, VirtualServers } from '@app/mcp';
import { redisUseOptions } from '@app/redis';
import type { RegistryService } from '@app/registry';
import {
  RedisServerStore,
  type ServerWrite,
  type StoredServer,
} from '../../libs/mcp/src/servers/server-store';
import { MAX_REGISTERED_SERVERS } from '../../libs/mcp/src/servers/server-registrations.service';
import {
  OwnRedis,
  SHARED_REDIS_URL,
  deleteKeys,
  redisClient,
  uniqueKeyPrefix,
} from '../support/redis';
import { waitFor } from '../support/gateway-process';

/**
 * Two replicas' registered virtual servers on one real Redis, each sync called in the order a
 * test needs (docs/operations.md §16 "Registered at runtime"): when the store loses its data,
 * every replica writes back what it serves, not only the first to notice, so a registration
 * another replica had not read yet is not lost.
 */
/** A store whose remove first runs what a test puts in between: another replica's write landing then. */
class StoreWithPause extends RedisServerStore {
  beforeRemove?: () => Promise<void>;
  beforeCreate?: () => Promise<void>;

  override async create(
    id: string,
    record: Omit<StoredServer, 'version'>,
    max?: number,
  ): Promise<ServerWrite> {
    await this.beforeCreate?.();
    return super.create(id, record, max);
  }

  override async remove(id: string, expected: number | undefined): Promise<ServerWrite> {
    await this.beforeRemove?.();
    return super.remove(id, expected);
  }
}

describe('registered virtual servers written back by every replica after Redis loses them', () => {
  const redis = redisClient();
  const prefixes: string[] = [];
  const replicas: VirtualServerRegistrations[] = [];
  const stores = new Map<VirtualServerRegistrations, StoreWithPause>();

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.onApplicationShutdown()));
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  /** Two replicas on one key prefix; each sync is the test's. */
  async function pair(
    url = SHARED_REDIS_URL,
  ): Promise<[VirtualServerRegistrations, VirtualServerRegistrations]> {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    const config = {
      version: '1',
      bundles: [],
      upstreams: [],
      mcp: {
        identity: 'gw',
        toolTags: [],
        virtualServers: [],
        redis: { keyPrefix, commandTimeoutMillis: 2000, connectTimeoutMillis: 2000 },
      },
    } as unknown as GatewayConfig;
    const registry = {
      current: () => ({ tools: [] }),
    } as unknown as RegistryService;
    const make = async (): Promise<VirtualServerRegistrations> => {
      const store = new StoreWithPause(
        new Redis(url, redisUseOptions('virtualServers', config.mcp.redis)),
        config,
      );
      const made = new VirtualServerRegistrations(
        config,
        new VirtualServers(config, registry),
        store,
        null,
      );
      // no onModuleInit (its timer): a test calls sync() itself, in the order it needs
      await made.sync();
      replicas.push(made);
      stores.set(made, store);
      return made;
    };
    return [await make(), await make()];
  }

  const ids = (r: VirtualServerRegistrations): string[] =>
    r
      .list()
      .servers.map((s) => s.id)
      .sort();

  it('the replica that had not read the newest registration writes back first: the other writes back the rest', async () => {
    const [a, b] = await pair();
    expect((await a.register({ id: 'old', tools: ['x.*'] }, 'op')).ok).toBe(true);
    await b.sync();
    // registered on a after b's last read: b does not serve it yet
    expect((await a.register({ id: 'newest', tools: ['x.*'] }, 'op')).ok).toBe(true);
    expect(ids(b)).toEqual(['old']);
    await deleteKeys(redis, prefixes.at(-1) as string);
    await b.sync();
    await a.sync();
    await b.sync();
    expect(ids(a)).toEqual(['newest', 'old']);
    expect(ids(b)).toEqual(['newest', 'old']);
    // each kept the version it had: an If-Match read before the loss still matches it
    const newest = a.get('newest');
    const stored = await redis.hget(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'newest');
    expect(newest.ok && JSON.parse(stored as string).version).toBe(newest.ok && newest.version);
  });

  it('a deletion made on one replica after the other wrote back still wins', async () => {
    const [a, b] = await pair();
    expect((await a.register({ id: 'kept', tools: ['x.*'] }, 'op')).ok).toBe(true);
    expect((await a.register({ id: 'gone', tools: ['x.*'] }, 'op')).ok).toBe(true);
    await b.sync();
    await deleteKeys(redis, prefixes.at(-1) as string);
    // b writes back both; a deletes one (its sync first reads b's write-back)
    await b.sync();
    expect((await a.remove('gone', undefined)).ok).toBe(true);
    await b.sync();
    await a.sync();
    expect(ids(a)).toEqual(['kept']);
    expect(ids(b)).toEqual(['kept']);
  });

  it('a store whose generation stays the same: a server deleted on another replica is not written back', async () => {
    const [a, b] = await pair();
    expect((await a.register({ id: 'brief', tools: ['x.*'] }, 'op')).ok).toBe(true);
    await b.sync();
    expect((await a.remove('brief', undefined)).ok).toBe(true);
    await b.sync();
    expect(ids(b)).toEqual([]);
    expect(await redis.hexists(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'brief')).toBe(0);
  });

  const toolsOf = (r: VirtualServerRegistrations, id: string): unknown => {
    const got = r.get(id);
    return got.ok ? got.body.tools : undefined;
  };

  it('a PUT the other replica had not read when Redis lost its data: its older copy written back first gives way to the PUT', async () => {
    const [a, b] = await pair();
    expect((await a.register({ id: 'edited', tools: ['old.*'] }, 'op')).ok).toBe(true);
    await b.sync();
    const put = await a.replace('edited', { id: 'edited', tools: ['new.*'] }, 'op', undefined);
    expect(put.ok).toBe(true);
    const putVersion = put.ok ? put.version : undefined;
    await deleteKeys(redis, prefixes.at(-1) as string);
    // b, which still serves the copy before the PUT, writes back first
    await b.sync();
    await a.sync();
    await b.sync();
    expect(toolsOf(a, 'edited')).toEqual(['new.*']);
    expect(toolsOf(b, 'edited')).toEqual(['new.*']);
    const stored = await redis.hget(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'edited');
    expect(JSON.parse(stored as string).version).toBe(putVersion);
  });

  it('a DELETE without If-Match that removed a PUT landing after its read: a write-back of the PUT after Redis lost its data is deleted again', async () => {
    const [a, b] = await pair();
    expect((await a.register({ id: 'raced', tools: ['old.*'] }, 'op')).ok).toBe(true);
    await b.sync();
    // a's PUT lands between b's read and b's delete: b removes the PUT's version
    const paused = stores.get(b) as StoreWithPause;
    paused.beforeRemove = async () => {
      paused.beforeRemove = undefined;
      expect(
        (await a.replace('raced', { id: 'raced', tools: ['new.*'] }, 'op', undefined)).ok,
      ).toBe(true);
    };
    expect((await b.remove('raced', undefined)).ok).toBe(true);
    expect(await redis.hexists(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'raced')).toBe(0);
    // Redis loses its data before a read the deletion: a writes back the PUT it serves
    await deleteKeys(redis, prefixes.at(-1) as string);
    await a.sync();
    // b deletes it again as it reads the write-back (a write of its own, not awaited by sync)
    await b.sync();
    expect(ids(b)).toEqual([]);
    await waitFor(
      async () => {
        await a.sync();
        return ids(a).length === 0;
      },
      10_000,
      () => `a still serves ${ids(a).join(', ')}`,
    );
    expect(await redis.hexists(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'raced')).toBe(0);
  });

  it(`two replicas registering the last of ${MAX_REGISTERED_SERVERS} places at once: one 201, one 409, never one more`, async () => {
    const [a, b] = await pair();
    for (let i = 1; i < MAX_REGISTERED_SERVERS; i++)
      expect((await a.register({ id: `s${i}`, tools: ['x.*'] }, 'op')).ok).toBe(true);
    // b counted the store's servers (one place left), then a takes the place before b writes
    const paused = stores.get(b) as StoreWithPause;
    paused.beforeCreate = async () => {
      paused.beforeCreate = undefined;
      expect((await a.register({ id: 'last-a', tools: ['x.*'] }, 'op')).ok).toBe(true);
    };
    const late = await b.register({ id: 'last-b', tools: ['x.*'] }, 'op');
    expect(late).toMatchObject({ ok: false, reason: 'conflict' });
    expect(await redis.hlen(`${prefixes.at(-1)}:{gw}:virtual-servers`)).toBe(
      MAX_REGISTERED_SERVERS,
    );
  });

  describe('Redis restarted from a copy older than the last writes', () => {
    let own: OwnRedis;
    beforeAll(async () => {
      own = await OwnRedis.start();
    });
    afterAll(async () => {
      await Promise.all(replicas.map((r) => r.onApplicationShutdown()));
      replicas.length = 0;
      // the copy this test saved stays in the server's own folder (test/support/redis.ts)
      await own.stop();
    });

    it('a PUT made after the copy was saved is written back by the replica that served it, on both replicas', async () => {
      const direct = redisClient(own.url);
      try {
        const [a, b] = await pair(own.url);
        expect((await a.register({ id: 'edited', tools: ['old.*'] }, 'op')).ok).toBe(true);
        await b.sync();
        await direct.save();
        const put = await a.replace('edited', { id: 'edited', tools: ['new.*'] }, 'op', undefined);
        expect(put.ok).toBe(true);
        await b.sync();
        expect(toolsOf(b, 'edited')).toEqual(['new.*']);
        // SIGKILL: nothing saved since, the restart loads the copy from before the PUT
        await own.restart();
        await waitFor(async () => (await direct.ping()) === 'PONG');
        expect(
          JSON.parse(
            (await direct.hget(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'edited')) as string,
          ).server.tools,
        ).toEqual(['old.*']);
        // each replica's connection comes back on its own: read until both served the store
        // again (before the fix both went on serving the copy before the PUT, whatever the wait)
        const served = async (): Promise<string> => {
          await a.sync();
          await b.sync();
          const stored = await direct.hget(`${prefixes.at(-1)}:{gw}:virtual-servers`, 'edited');
          return JSON.stringify([
            toolsOf(a, 'edited'),
            toolsOf(b, 'edited'),
            stored && JSON.parse(stored).server.tools,
          ]);
        };
        await waitFor(
          async () => (await served()) === JSON.stringify([['new.*'], ['new.*'], ['new.*']]),
          10_000,
          () => 'the PUT made after the saved copy was not written back',
        );
      } finally {
        direct.disconnect();
      }
    });
  });
});
