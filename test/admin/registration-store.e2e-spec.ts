import 'reflect-metadata';
import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { redisUseOptions } from '@app/redis';
import {
  DELETION_MEMORY_MAX,
  DELETION_MEMORY_MS,
  RedisRegistrationStore,
  type NewRegistration,
} from '@app/registrations';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

/**
 * The Redis registration store's scripts against a real Redis (operations §15 "Shared and
 * durable"): an id and a published-name prefix are taken once, a change is a compare-and-set
 * on the version, and a store that lost its data is told from an emptied one by its marker.
 */
/**
 * Waits until the clock in ms has passed a version. A store that lost its counter counts on from
 * the time in ms: above every version drawn before the loss as long as they were drawn slower
 * than one a millisecond, as an admin's writes are (docs/operations.md §15); writes back to back
 * on a local Redis are faster, so a test's loss comes once the clock has passed them.
 */
async function clockPast(version: number): Promise<void> {
  while (Date.now() <= version) await new Promise((resolve) => setTimeout(resolve, 2));
}

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
        new Redis(SHARED_REDIS_URL, redisUseOptions('registrations', config.mcp.redis)),
        config,
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

  it('two replicas creating the same tokenExchange audience (in two spellings): exactly one is stored', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const exchange = (audience: string) => ({
      authorization: {
        mode: 'tokenExchange',
        tokenEndpoint: 'https://idp.example/token',
        clientId: 'gw',
        clientSecretEnv: 'MCP_UPSTREAM_SECRET_GW',
        audience,
      },
    });
    const results = await Promise.all([
      a.create(record('t1', exchange('https://Owner.example:443/mcp/')), generation, 100),
      b.create(record('t2', exchange('https://owner.example/mcp?x=1')), generation, 100),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['audienceTaken', 'created']);
    const winner = results[0]?.kind === 'created' ? 't1' : 't2';
    expect(results.find((r) => r.kind === 'audienceTaken')).toEqual({
      kind: 'audienceTaken',
      id: winner,
    });
    // another audience, or none, is free
    expect(
      await b.create(record('t3', exchange('https://other.example/mcp')), generation, 100),
    ).toMatchObject({ kind: 'created' });
    expect(await b.create(record('t4'), generation, 100)).toMatchObject({ kind: 'created' });
  });

  it('replace and remove are compare-and-set on a version that a delete and re-create never reuse', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const first = await a.create(record('dup', { forwardHeaders: ['X-Tenant'] }), generation, 100);
    if (first.kind !== 'created') throw new Error(first.kind);
    expect(await b.remove('dup', undefined, generation)).toEqual({
      kind: 'removed',
      version: first.version,
    });
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

  it('a store without a marker, seeded by a replica that never read one, still never hands out a version drawn before: a replica cannot tell a new store from one that lost its data', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const x = await a.create(record('x'), generation, 100);
    if (x.kind !== 'created') throw new Error(x.kind);
    await clockPast(x.version);
    await redis.del(a.key, a.metaKey, a.tombstonesKey, a.seededKey);
    // b starts now: it has read no marker, so it seeds as a first replica would
    const fresh = await b.seed(undefined, []);
    const again = await b.create(
      record('x', { url: 'http://127.0.0.1:1/other' }),
      fresh.generation,
      100,
    );
    expect(again.kind === 'created' && again.version > x.version).toBe(true);
    // a's compare-and-set on the version it had is refused, whichever generation it retries under
    expect(await a.replace(record('x', { enabled: false }), x.version, fresh.generation)).toEqual({
      kind: 'changed',
      version: again.kind === 'created' ? again.version : -1,
    });
  });

  it('a store that lost its data answers writes "generation" and is re-seeded, deletions since are not brought back', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const x = await a.create(record('x'), generation, 100);
    const y = await a.create(record('y'), generation, 100);
    if (x.kind !== 'created' || y.kind !== 'created') throw new Error('not created');
    const applied = (await a.read()).registrations;
    // the reset: every key of the store gone
    await redis.del(a.key, a.metaKey, a.tombstonesKey, a.seededKey);
    expect(await a.read()).toEqual({
      generation: undefined,
      registrations: [],
      deleted: [],
      server: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(await b.create(record('z'), generation, 100)).toEqual({ kind: 'generation' });
    expect(await b.replace(record('x'), x.version, generation)).toEqual({ kind: 'generation' });

    const seeded = await a.seed(
      generation,
      applied.filter((r) => r.upstream.id === 'x'),
    );
    expect(seeded.generation).not.toBe(generation);
    expect(seeded.written).toBe(1);
    // a record deleted after the re-seed is not written back by a replica that re-seeds late
    expect(await a.remove('x', undefined, seeded.generation)).toEqual({
      kind: 'removed',
      version: x.version,
    });
    const late = await b.seed(generation, applied);
    expect(late).toEqual({ generation: seeded.generation, written: 1, removed: 0 });
    const after = await b.read();
    expect(after.registrations.map((r) => r.upstream.id)).toEqual(['y']);
    // the counter never hands out a version again
    const z = await b.create(record('z'), seeded.generation, 100);
    expect(z.kind === 'created' && z.version > y.version).toBe(true);
  });

  it('a store that lost everything never hands out a version drawn before the loss, even one the re-seeding replica never saw', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const x = await a.create(record('x'), generation, 100);
    const y = await a.create(record('y'), generation, 100);
    if (x.kind !== 'created' || y.kind !== 'created') throw new Error('not created');
    await clockPast(y.version);
    await redis.del(a.key, a.metaKey, a.tombstonesKey, a.seededKey);
    // b had read none of a's registrations: it re-seeds with nothing, then registers x anew
    const seeded = await b.seed(generation, []);
    const again = await b.create(record('x'), seeded.generation, 100);
    if (again.kind !== 'created') throw new Error(`not created: ${again.kind}`);
    // an If-Match of a's x (or y) can never match b's x
    expect(again.version).toBeGreaterThan(y.version);
    expect(await a.remove('x', x.version, seeded.generation)).toEqual({
      kind: 'changed',
      version: again.version,
    });
  });

  it('restore (same marker, another master): writes back the writes the store lost, keeps its deletions, never re-seeds', async () => {
    const [a, b] = pair();
    const { generation } = await a.seed(undefined, []);
    const x = await a.create(record('x'), generation, 100);
    const gone = await a.create(record('gone'), generation, 100);
    if (x.kind !== 'created' || gone.kind !== 'created') throw new Error('not created');
    expect(await b.remove('gone', undefined, generation)).toMatchObject({ kind: 'removed' });
    // the state a failover's new master was promoted with: what follows never reached it
    const kept = {
      x: (await redis.hget(a.key, 'x'))!,
      counter: (await redis.hget(a.metaKey, 'version'))!,
    };
    const y = await a.create(record('y'), generation, 100);
    const xv2 = await a.replace(record('x', { enabled: false }), x.version, generation);
    if (y.kind !== 'created' || xv2.kind !== 'replaced') throw new Error('not written');
    // what replica A applied: x at its second version, y, and gone as it was before its deletion
    const applied = (await a.read()).registrations.concat([
      { ...record('gone'), version: gone.version },
    ]);
    await redis.hdel(a.key, 'y');
    await redis.hset(a.key, 'x', kept.x);
    await redis.hset(a.metaKey, 'version', kept.counter);
    const restored = await a.seed(generation, applied, [], 'restore');
    expect(restored).toEqual({ generation, written: 2, removed: 0 });
    const after = await b.read();
    expect(Object.fromEntries(after.registrations.map((r) => [r.upstream.id, r.version]))).toEqual({
      x: xv2.version,
      y: y.version,
    });
    expect(after.registrations.find((r) => r.upstream.id === 'x')?.upstream.enabled).toBe(false);
    // the counter is above every version given again
    const z = await b.create(record('z'), generation, 100);
    expect(z.kind === 'created' && z.version > xv2.version).toBe(true);
    // a deleted id whose tombstone is gone and whose version the counter passed stays deleted
    await redis.hdel(a.tombstonesKey, 'gone');
    expect(await a.seed(generation, applied, [], 'restore')).toMatchObject({ written: 0 });
    expect((await b.read()).registrations.map((r) => r.upstream.id)).not.toContain('gone');
    // a restore under another marker (the store was reset meanwhile) writes nothing
    expect(await a.seed('another-generation', applied, [], 'restore')).toEqual({
      generation,
      written: 0,
      removed: 0,
    });
  });

  /**
   * The store of two replicas after a reset, each re-seeding from what it knew before it:
   * the merge per id gives the same store whichever seeds first (registration-tombstones.ts).
   */
  describe('re-seeding after a reset merges per id, whichever replica seeds first', () => {
    type Seeder = (s: RedisRegistrationStore, known: string) => Promise<unknown>;

    /** Runs the two seeds in both orders on fresh stores; returns the two stores' contents. */
    async function bothOrders(
      setUp: (a: RedisRegistrationStore, generation: string) => Promise<[Seeder, Seeder]>,
    ): Promise<Array<{ live: Record<string, number>; deleted: Record<string, number> }>> {
      const out = [];
      for (const order of [0, 1]) {
        const [a, b] = pair();
        const { generation } = await a.seed(undefined, []);
        const [first, second] = await setUp(a, generation);
        await redis.del(a.key, a.metaKey, a.tombstonesKey, a.seededKey);
        if (order === 0) {
          await first(a, generation);
          await second(b, generation);
        } else {
          await second(b, generation);
          await first(a, generation);
        }
        const snapshot = await a.read();
        out.push({
          live: Object.fromEntries(snapshot.registrations.map((r) => [r.upstream.id, r.version])),
          deleted: Object.fromEntries(snapshot.deleted.map((t) => [t.id, t.version])),
        });
      }
      return out;
    }

    it('a deletion beats the record it deleted, re-seeded by a replica that had not read it', async () => {
      const results = await bothOrders(async (a, generation) => {
        const made = await a.create(record('dup'), generation, 100);
        const kept = await a.create(record('kept'), generation, 100);
        if (made.kind !== 'created' || kept.kind !== 'created') throw new Error('not created');
        const stale = (await a.read()).registrations;
        const removed = await a.remove('dup', undefined, generation);
        if (removed.kind !== 'removed') throw new Error(removed.kind);
        const tombstone = { id: 'dup', version: removed.version, deletedAt: Date.now() };
        const rest = stale.filter((r) => r.upstream.id !== 'dup');
        return [(s, known) => s.seed(known, rest, [tombstone]), (s, known) => s.seed(known, stale)];
      });
      for (const result of results) {
        expect(Object.keys(result.live)).toEqual(['kept']);
        expect(Object.keys(result.deleted)).toEqual(['dup']);
      }
    });

    it('the higher version of a record wins; a record written since the reset beats any seed', async () => {
      const newest: number[] = [];
      const results = await bothOrders(async (a, generation) => {
        const made = await a.create(record('pat'), generation, 100);
        if (made.kind !== 'created') throw new Error(made.kind);
        const older = (await a.read()).registrations;
        const patched = await a.replace(
          record('pat', { enabled: false }),
          made.version,
          generation,
        );
        if (patched.kind !== 'replaced') throw new Error(patched.kind);
        newest.push(patched.version);
        const newer = (await a.read()).registrations;
        return [(s, known) => s.seed(known, newer), (s, known) => s.seed(known, older)];
      });
      expect(results.map((result) => Object.values(result.live))).toEqual(newest.map((v) => [v]));

      // after the first seed a replica writes under the new generation: a late seed of an
      // older view (a higher version of the same id, a deletion of it) does not undo that
      const [a, b] = pair();
      const { generation } = await a.seed(undefined, []);
      for (let i = 0; i < 5; i++) await a.create(record(`filler${i}`), generation, 100);
      const high = await a.create(record('again'), generation, 100);
      if (high.kind !== 'created') throw new Error(high.kind);
      const view = (await a.read()).registrations.filter((r) => r.upstream.id === 'again');
      await clockPast(high.version);
      await redis.del(a.key, a.metaKey, a.tombstonesKey, a.seededKey);
      const fresh = await b.seed(generation, []);
      const posted = await b.create(record('again', { enabled: false }), fresh.generation, 100);
      const other = await b.create(record('other'), fresh.generation, 100);
      if (posted.kind !== 'created' || other.kind !== 'created') throw new Error('not created');
      // versions drawn after the loss are above every one drawn before (the counter counts on
      // from now); the late seed's view of `again` is given a higher version still, so that
      // what is checked is the rule itself: a record written since the reset beats any seed
      expect(posted.version).toBeGreaterThan(high.version);
      const lateView = view.map((r) => ({ ...r, version: posted.version + 5 }));
      const late = await a.seed(generation, lateView, [
        { id: 'other', version: other.version + 10, deletedAt: Date.now() },
      ]);
      expect(late).toMatchObject({ written: 0, removed: 0 });
      const stored = (await a.read()).registrations;
      expect(stored.map((r) => [r.upstream.id, r.version]).sort()).toEqual([
        ['again', posted.version],
        ['other', other.version],
      ]);
      // the counter went above every version the late seed knew
      const next = await a.create(record('next'), fresh.generation, 100);
      expect(next.kind === 'created' && next.version > other.version + 10).toBe(true);
    });

    it('a new registration one replica accepted survives a seed from a replica that never saw it, and a deletion of an older incarnation', async () => {
      const results = await bothOrders(async (a, generation) => {
        const first = await a.create(record('fresh'), generation, 100);
        if (first.kind !== 'created') throw new Error(first.kind);
        const removed = await a.remove('fresh', undefined, generation);
        if (removed.kind !== 'removed') throw new Error(removed.kind);
        const before = { id: 'fresh', version: removed.version, deletedAt: Date.now() };
        const again = await a.create(record('fresh', { enabled: false }), generation, 100);
        if (again.kind !== 'created') throw new Error(again.kind);
        const now = (await a.read()).registrations;
        return [(s, known) => s.seed(known, now), (s, known) => s.seed(known, [], [before])];
      });
      for (const result of results) {
        expect(Object.keys(result.live)).toEqual(['fresh']);
        expect(result.deleted).toEqual({});
      }
    });

    it('the store keeps only recent tombstones, at most DELETION_MEMORY_MAX', async () => {
      const [a] = pair();
      const { generation } = await a.seed(undefined, []);
      const old = Date.now() - DELETION_MEMORY_MS - 1000;
      const many = Array.from({ length: DELETION_MEMORY_MAX + 5 }, (_, i) => ({
        id: `t${i}`,
        version: i + 1,
        deletedAt: Date.now() - DELETION_MEMORY_MAX + i,
      }));
      await redis.del(a.metaKey);
      await a.seed(generation, [], [{ id: 'ancient', version: 1, deletedAt: old }, ...many]);
      const deleted = (await a.read()).deleted.map((t) => t.id);
      expect(deleted).toHaveLength(DELETION_MEMORY_MAX);
      expect(deleted).not.toContain('ancient');
      expect(deleted).not.toContain('t0');
      expect(deleted).toContain(`t${DELETION_MEMORY_MAX + 4}`);
      expect(await redis.pttl(a.tombstonesKey)).toBeGreaterThan(0);
    });
  });
});
