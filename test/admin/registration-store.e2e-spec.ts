import 'reflect-metadata';
import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { RedisRegistrationStore } from '../../apps/gateway/src/admin/redis-registration-store';
import type { NewRegistration } from '../../apps/gateway/src/admin/registration-store';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

/**
 * The Redis registration store's scripts against a real Redis (operations §15 "Shared and
 * durable"): an id and a published-name prefix are taken once, a change is a compare-and-set
 * on the version, and a store that lost its data is told from an emptied one by its marker.
 */
describe('RedisRegistrationStore on a real Redis', () => {
  const redis = redisClient();
  const prefixes: string[] = [];
  const stores: RedisRegistrationStore[] = [];

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  /** Two stores on one key prefix: two replicas. */
  const pair = (): [RedisRegistrationStore, RedisRegistrationStore] => {
    const keyPrefix = uniqueKeyPrefix();
    prefixes.push(keyPrefix);
    const config = {
      mcp: {
        identity: 'gw',
        redis: { keyPrefix, commandTimeoutMillis: 2000, connectTimeoutMillis: 2000 },
      },
    } as unknown as Pick<GatewayConfig, 'mcp'>;
    const make = () =>
      new RedisRegistrationStore(
        SHARED_REDIS_URL,
        config,
        (url, options) => new Redis(url, options),
      );
    const made: [RedisRegistrationStore, RedisRegistrationStore] = [make(), make()];
    stores.push(...made);
    return made;
  };

  const record = (id: string, extra: Record<string, unknown> = {}): NewRegistration => ({
    upstream: {
      id,
      url: `http://10.0.0.9/${id}`,
      enabled: true,
      forwardHeaders: [],
      ...extra,
    } as unknown as NewRegistration['upstream'],
    createdAt: 1,
    updatedAt: 1,
    createdBy: 'admin-token',
    updatedBy: 'admin-token',
  });

  it('two replicas creating the same namePrefix at the same moment: exactly one is stored', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    expect((await b.read()).generation).toBe(generation);
    const results = await Promise.all([
      a.create(record('p1', { namePrefix: 'shared__' }), generation, 100),
      b.create(record('p2', { namePrefix: 'shared__' }), generation, 100),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['created', 'prefixTaken']);
    expect((await a.read()).registrations).toHaveLength(1);
    // one that starts with another's prefix, the default <id>__ prefix, a taken id, a full store
    expect(
      await b.create(record('p3', { namePrefix: 'shared__x' }), generation, 100),
    ).toMatchObject({
      kind: 'prefixTaken',
      prefix: 'shared__',
    });
    expect(await b.create(record('q', { namePrefix: 'sh' }), generation, 100)).toMatchObject({
      kind: 'prefixTaken',
    });
    expect(await a.create(record('d.1'), generation, 100)).toMatchObject({ kind: 'created' });
    expect(await b.create(record('x', { namePrefix: 'd_1__' }), generation, 100)).toMatchObject({
      kind: 'prefixTaken',
      id: 'd.1',
      prefix: 'd_1__',
    });
    const winner = results.find((r) => r.kind === 'created') ? 'p1' : 'p2';
    expect(await b.create(record(winner, { namePrefix: 'z__' }), generation, 100)).toEqual({
      kind: 'idTaken',
    });
    expect(await b.create(record('y'), generation, 2)).toEqual({ kind: 'full' });
  });

  it('replace and remove are compare-and-set on a version that a delete and re-create never reuse', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const first = await a.create(record('dup', { forwardHeaders: ['X-Tenant'] }), generation, 100);
    if (first.kind !== 'created') throw new Error(first.kind);
    expect(await b.remove('dup', undefined, generation)).toEqual({ kind: 'removed' });
    const second = await b.create(record('dup', { url: 'http://10.0.0.10/new' }), generation, 100);
    if (second.kind !== 'created') throw new Error(second.kind);
    expect(second.version).toBeGreaterThan(first.version);
    // a change based on the deleted record is refused, the stored one stays
    expect(await a.replace(record('dup', { enabled: false }), first.version, generation)).toEqual({
      kind: 'changed',
      version: second.version,
    });
    expect(await a.remove('dup', first.version, generation)).toEqual({
      kind: 'changed',
      version: second.version,
    });
    const stored = (await a.read()).registrations;
    expect(stored).toEqual([
      expect.objectContaining({
        version: second.version,
        upstream: expect.objectContaining({ url: 'http://10.0.0.10/new', enabled: true }),
      }),
    ]);
    const replaced = await a.replace(
      record('dup', { url: 'http://10.0.0.10/new', enabled: false }),
      second.version,
      generation,
    );
    expect(replaced).toEqual({ kind: 'replaced', version: second.version + 1 });
    expect(await a.replace(record('nope'), 1, generation)).toEqual({ kind: 'missing' });
    // arrays stay arrays (the scripts never re-encode JSON)
    expect((await b.read()).registrations[0]?.upstream.forwardHeaders).toEqual([]);
  });

  it('a store that lost its data answers writes "generation" and is re-seeded, deletions since are not brought back', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const x = await a.create(record('x'), generation, 100);
    const y = await a.create(record('y'), generation, 100);
    if (x.kind !== 'created' || y.kind !== 'created') throw new Error('not created');
    const applied = (await a.read()).registrations;
    // the reset: every key of the store gone
    await redis.del(a.key, a.metaKey, a.deletedKey);
    expect(await a.read()).toEqual({ generation: undefined, registrations: [] });
    expect(await b.create(record('z'), generation, 100)).toEqual({ kind: 'generation' });
    expect(await b.replace(record('x'), x.version, generation)).toEqual({ kind: 'generation' });

    const seeded = await a.seed(
      generation,
      applied.filter((r) => r.upstream.id === 'x'),
    );
    expect(seeded.generation).not.toBe(generation);
    expect(seeded.written).toBe(1);
    // a record deleted after the re-seed is not written back by a replica that re-seeds late
    expect(await a.remove('x', undefined, seeded.generation)).toEqual({ kind: 'removed' });
    const late = await b.seed(generation, applied);
    expect(late).toEqual({ generation: seeded.generation, written: 1 });
    const after = await b.read();
    expect(after.registrations.map((r) => r.upstream.id)).toEqual(['y']);
    // the counter never hands out a version again
    const z = await b.create(record('z'), seeded.generation, 100);
    expect(z.kind === 'created' && z.version > y.version).toBe(true);
  });
});
