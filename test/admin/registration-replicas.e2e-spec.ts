import type Redis from 'ioredis';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { rpc } from '../support/rpc';
import {
  OwnRedis,
  SHARED_REDIS_URL,
  deleteKeys,
  redisClient,
  uniqueKeyPrefix,
} from '../support/redis';
import { ADMIN_TOKEN, admin, toolNames, waitForState, waitForTool } from './admin-support';

/** The hash registrations live in (operations §15 "Shared and durable"). */
const hashOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

/**
 * A replica of the gateway on `redisUrl`, fronting the configured upstream `calc`; waited for
 * generously (a loaded CI starts several at once), and stopped if it never gets ready.
 */
async function replica(
  redisUrl: string,
  keyPrefix: string,
  calcUrl: string,
  refreshIntervalSeconds: number,
): Promise<GatewayProcess> {
  return GatewayProcess.startPatiently({
    mcp: gatewayConfig([], {
      redis: { keyPrefix },
      registry: { refreshIntervalSeconds },
      upstreams: [upstream('calc', calcUrl)],
    }),
    env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: redisUrl },
  });
}

/** Which of the servers answered the `tools/call` of `name` through the gateway. */
async function routedTo(
  gateway: GatewayProcess,
  name: string,
  servers: Record<string, V2Upstream>,
): Promise<string[]> {
  const before = new Map(
    Object.entries(servers).map(([k, s]) => [k, s.requestsFor('tools/call').length]),
  );
  const call = await rpc(gateway.mcpUrl, 'tools/call', { name, arguments: { a: 1, b: 2 } });
  expect(call.json?.result?.structuredContent).toEqual({ sum: 3 });
  return Object.entries(servers)
    .filter(([k, s]) => s.requestsFor('tools/call').length > (before.get(k) ?? 0))
    .map(([k]) => k);
}

/** A record as an earlier gateway version (or anything writing Redis) stored it. */
function rawRecord(id: string, upstreamFields: Record<string, unknown>, createdAt: number): string {
  return JSON.stringify({
    v: 1,
    upstream: { id, ...upstreamFields },
    createdAt,
    updatedAt: createdAt,
    createdBy: 'admin-token',
    updatedBy: 'admin-token',
  });
}

/**
 * Two gateway processes on one Redis that read the store only every 30 s (refresh 60 s), so
 * each acts on what it read long ago: a registration and a change must still agree across
 * them, because the store decides atomically.
 */
describe('two replicas on one Redis, each with a stale view (prefix uniqueness, compare-and-set)', () => {
  const redis = redisClient();
  const keyPrefix = uniqueKeyPrefix();
  let calc: V2Upstream;
  let s1: V2Upstream;
  let s2: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    [calc, s1, s2] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
    a = await replica(SHARED_REDIS_URL, keyPrefix, calc.url, 60);
    // `dup` exists before replica b starts: b reads it at start, then not for 30 s
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'dup', url: s1.url })).status).toBe(
      202,
    );
    b = await replica(SHARED_REDIS_URL, keyPrefix, calc.url, 60);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([calc?.stop(), s1?.stop(), s2?.stop()]);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('DELETE dup, POST dup with a new URL on one replica, PATCH dup on the other right after: 409, the store keeps the new URL; If-Match and ETag make it explicit', async () => {
    // first in this describe: b read the store at its start, a moment ago, and not since
    const seen = await admin(b, 'GET', '/admin/upstreams/dup');
    expect(seen.body).toMatchObject({ url: s1.url, enabled: true });
    expect(seen.headers.get('etag')).toBe(`"${seen.body.version}"`);

    expect((await admin(a, 'DELETE', '/admin/upstreams/dup')).status).toBe(200);
    const again = await admin(a, 'POST', '/admin/upstreams', { id: 'dup', url: s2.url });
    expect(again.status).toBe(202);
    expect(again.body.version).toBeGreaterThan(seen.body.version);
    expect(again.headers.get('etag')).toBe(`"${again.body.version}"`);

    const patched = await admin(b, 'PATCH', '/admin/upstreams/dup', { enabled: false });
    expect(patched.status).toBe(409);
    expect(patched.body.message).toMatch(/^Upstream "dup" was changed since it was read/);
    const stored = JSON.parse((await redis.hget(hashOf(keyPrefix), 'dup')) ?? '{}');
    expect(stored).toMatchObject({
      version: again.body.version,
      upstream: { url: s2.url, enabled: true },
    });
    // b read it again with the refusal: what it shows now is what is stored
    const fresh = await admin(b, 'GET', '/admin/upstreams/dup');
    expect(fresh.body).toMatchObject({ url: s2.url, version: again.body.version });

    // an explicit If-Match: the version read before is refused, the current one applies
    const stale = await admin(a, 'PATCH', '/admin/upstreams/dup', { enabled: false }, ADMIN_TOKEN, {
      'if-match': `"${seen.body.version}"`,
    });
    expect(stale.status).toBe(409);
    const current = await admin(
      b,
      'PATCH',
      '/admin/upstreams/dup',
      { enabled: false },
      ADMIN_TOKEN,
      {
        'if-match': fresh.headers.get('etag') ?? '',
      },
    );
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ url: s2.url, enabled: false, state: 'DISABLED' });
    expect(current.headers.get('etag')).toBe(`"${current.body.version}"`);
    expect(JSON.parse((await redis.hget(hashOf(keyPrefix), 'dup')) ?? '{}')).toMatchObject({
      upstream: { url: s2.url, enabled: false },
    });
    const malformed = await admin(a, 'DELETE', '/admin/upstreams/dup', undefined, ADMIN_TOKEN, {
      'if-match': 'v1',
    });
    expect(malformed.status).toBe(400);
    const staleDelete = await admin(a, 'DELETE', '/admin/upstreams/dup', undefined, ADMIN_TOKEN, {
      'if-match': fresh.headers.get('etag') ?? '',
    });
    expect(staleDelete.status).toBe(409);
    expect(await redis.hexists(hashOf(keyPrefix), 'dup')).toBe(1);
    const deleted = await admin(a, 'DELETE', '/admin/upstreams/dup', undefined, ADMIN_TOKEN, {
      'if-match': `"${current.body.version}"`,
    });
    expect(deleted.status).toBe(200);
  });

  it('POST p1 and p2 with namePrefix "shared__" on two replicas at the same moment: one 202, one 409, both replicas route shared__* to the winner', async () => {
    const [onA, onB] = await Promise.all([
      admin(a, 'POST', '/admin/upstreams', { id: 'p1', url: s1.url, namePrefix: 'shared__' }),
      admin(b, 'POST', '/admin/upstreams', { id: 'p2', url: s2.url, namePrefix: 'shared__' }),
    ]);
    expect([onA.status, onB.status].sort()).toEqual([202, 409]);
    const [winner, loser] = onA.status === 202 ? ['p1', 'p2'] : ['p2', 'p1'];
    const refused = onA.status === 409 ? onA : onB;
    expect(refused.body.problems).toEqual([
      `namePrefix: "shared__" duplicates the namePrefix of registered upstream "${winner}" (prefixes are unique across bundles and upstreams)`,
    ]);
    // one record in the store; the loser exists on no replica
    expect(Object.keys(await redis.hgetall(hashOf(keyPrefix))).sort()).toEqual([winner]);
    for (const gateway of [a, b]) {
      expect((await admin(gateway, 'GET', `/admin/upstreams/${loser}`)).status).toBe(404);
      await waitForState(gateway, winner, 'ACTIVE', 30_000);
      await waitForTool(gateway, 'shared__add', true, 30_000);
    }
    const servers = { p1: s1, p2: s2 };
    expect(await routedTo(a, 'shared__add', servers)).toEqual([winner]);
    expect(await routedTo(b, 'shared__add', servers)).toEqual([winner]);
  });

  it('within half a refresh interval: a prefix taken on one replica is 409 on the other, which has not read it yet', async () => {
    const first = await admin(a, 'POST', '/admin/upstreams', {
      id: 'q1',
      url: s1.url,
      namePrefix: 'late__',
    });
    expect(first.status).toBe(202);
    // b read the store 30 s ago at most, never since q1: the store refuses
    const second = await admin(b, 'POST', '/admin/upstreams', {
      id: 'q2',
      url: s2.url,
      namePrefix: 'late__',
    });
    expect(second.status).toBe(409);
    expect(second.body.problems).toEqual([
      'namePrefix: "late__" duplicates the namePrefix of registered upstream "q1" (prefixes are unique across bundles and upstreams)',
    ]);
    expect(await redis.hexists(hashOf(keyPrefix), 'q2')).toBe(0);
    // a prefix that starts with the other, or that the other starts with, overlaps as well
    for (const namePrefix of ['late__x', 'lat']) {
      const overlapping = await admin(b, 'POST', '/admin/upstreams', {
        id: `q2-${namePrefix}`,
        url: s2.url,
        namePrefix,
      });
      expect(overlapping.status).toBe(409);
      expect(overlapping.body.problems).toEqual([
        expect.stringMatching(
          /^namePrefix: .*registered upstream "q1".*so a published name could belong to both$/,
        ),
      ]);
    }
    // the refused replica read the store: it serves q1 now, as a does
    expect((await admin(b, 'GET', '/admin/upstreams/q1')).body).toMatchObject({
      namePrefix: 'late__',
    });
  });

  it('the address guard checks every write and every record read: a stored record for a cloud metadata address is FAILED and its PATCH 400', async () => {
    // written around the API (an earlier version, a lost update, anyone with Redis access)
    await redis.hset(
      hashOf(keyPrefix),
      'meta',
      rawRecord('meta', { url: 'http://169.254.169.254/mcp', enabled: true }, Date.now()),
    );
    // b has not read it: the PATCH reads the store, the guard refuses the address
    const patched = await admin(b, 'PATCH', '/admin/upstreams/meta', { enabled: true });
    expect(patched.status).toBe(400);
    expect(patched.body.problems).toEqual([
      expect.stringMatching(/^url: host "169\.254\.169\.254" resolves to .*cloud metadata/),
    ]);
    const record = await admin(b, 'GET', '/admin/upstreams/meta');
    expect(record.body).toMatchObject({ state: 'FAILED' });
    expect(record.body.reason).toMatch(
      /^url: host "169\.254\.169\.254" resolves to .*cloud metadata/,
    );
  });

  it('If-Match compares entity tags strongly, as text: "0<version>" is another tag than the ETag "<version>" (409, PATCH and DELETE)', async () => {
    const created = await admin(a, 'POST', '/admin/upstreams', { id: 'tagged', url: s2.url });
    expect(created.status).toBe(202);
    const version = created.body.version as number;
    expect(created.headers.get('etag')).toBe(`"${version}"`);
    const patched = await admin(
      a,
      'PATCH',
      '/admin/upstreams/tagged',
      { enabled: false },
      ADMIN_TOKEN,
      {
        'if-match': `"0${version}"`,
      },
    );
    const deleted = await admin(a, 'DELETE', '/admin/upstreams/tagged', undefined, ADMIN_TOKEN, {
      'if-match': `"00${version}"`,
    });
    expect({ patch: patched.status, delete: deleted.status }).toEqual({ patch: 409, delete: 409 });
    expect((await admin(a, 'GET', '/admin/upstreams/tagged')).body).toMatchObject({
      enabled: true,
      version,
    });
  });

  // last in this describe: it empties the store
  it('the store emptied and a replica started on it: the versions it hands out are new, and a stale PATCH of a replica that read the old store is 409, never writing the old URL back', async () => {
    const first = await admin(a, 'POST', '/admin/upstreams', { id: 'x', url: s1.url });
    expect(first.status).toBe(202);
    const oldTag = first.headers.get('etag');
    // Redis comes back empty (for this gateway identity's keys)
    await deleteKeys(redis, keyPrefix);
    const c = await replica(SHARED_REDIS_URL, keyPrefix, calc.url, 60);
    try {
      // c never read a generation marker: it cannot tell this store from a new one. Were its
      // counter to start again from 0, its x would get the version a's x had: c draws that many
      // versions first
      const drawnBefore = first.body.version as number;
      for (let i = 1; i < Math.min(drawnBefore, 50); i++) {
        const filler = await admin(c, 'POST', '/admin/upstreams', { id: `f${i}`, url: s2.url });
        expect(filler.status).toBe(202);
      }
      const again = await admin(c, 'POST', '/admin/upstreams', { id: 'x', url: s2.url });
      expect(again.status).toBe(202);
      expect(again.headers.get('etag')).not.toBe(oldTag);
      // a, which has not read the store since, disables x on its pre-reset copy
      const patched = await admin(a, 'PATCH', '/admin/upstreams/x', { enabled: false });
      const stale = await admin(c, 'PATCH', '/admin/upstreams/x', { enabled: false }, ADMIN_TOKEN, {
        'if-match': oldTag ?? '',
      });
      const stored = JSON.parse((await redis.hget(hashOf(keyPrefix), 'x')) ?? '{}');
      expect({
        patch: patched.status,
        ifMatchReadBeforeTheReset: stale.status,
        url: stored.upstream?.url,
        disabled: stored.upstream?.enabled === false,
      }).toEqual({ patch: 409, ifMatchReadBeforeTheReset: 409, url: s2.url, disabled: false });
    } finally {
      await c.stop();
    }
  });
});

/**
 * Two replicas on a Redis of the test's own, which restarts without its data or is flushed:
 * the replicas keep serving what they applied, tell the reset from deletions by the store's
 * generation marker, warn (log, status, metric) and write their registrations back.
 */
describe('two replicas when Redis comes back empty (restart without data, FLUSHALL)', () => {
  const keyPrefix = uniqueKeyPrefix();
  let own: OwnRedis;
  let client: Redis;
  let calc: V2Upstream;
  let s1: V2Upstream;
  let s2: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    own = await OwnRedis.start();
    client = redisClient(own.url);
    [calc, s1, s2] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
    // two-second refreshes: each replica reads the store every second
    [a, b] = await Promise.all([
      replica(own.url, keyPrefix, calc.url, 2),
      replica(own.url, keyPrefix, calc.url, 2),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([calc?.stop(), s1?.stop(), s2?.stop()]);
    client?.disconnect();
    await own?.stop();
  });

  const storeOf = async (gateway: GatewayProcess) =>
    (await admin(gateway, 'GET', '/admin/upstreams')).body;
  const resetsMetric = async (gateway: GatewayProcess): Promise<number> => {
    const text = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    const m = /^mcp_gateway_registration_store_resets_total (\d+)/m.exec(text);
    return m === null ? -1 : Number(m[1]);
  };

  it('after a restart without data every registration stays served on both replicas and is written back; a deletion is still a deletion', async () => {
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'r1', url: s1.url })).status).toBe(
      202,
    );
    expect((await admin(b, 'POST', '/admin/upstreams', { id: 'r2', url: s2.url })).status).toBe(
      202,
    );
    for (const gateway of [a, b])
      for (const id of ['r1', 'r2']) await waitForState(gateway, id, 'ACTIVE', 30_000);
    const before = JSON.parse((await client.hget(hashOf(keyPrefix), 'r1')) ?? '{}');
    expect(await resetsMetric(a)).toBe(0);

    await own.stop();
    await own.restart();
    // the store is written back from what the replicas applied: same record, same version
    await waitFor(
      async () => (await client.hlen(hashOf(keyPrefix)).catch(() => 0)) === 2,
      30_000,
      () => `the store was not re-seeded:\n${a.output}\n${b.output}`,
    );
    expect(JSON.parse((await client.hget(hashOf(keyPrefix), 'r1')) ?? '{}')).toEqual(before);
    for (const gateway of [a, b]) {
      await waitFor(async () => (await storeOf(gateway)).store.resets === 1, 30_000);
      const list = await storeOf(gateway);
      expect(list.store).toMatchObject({ available: true, resets: 1 });
      expect(Date.parse(list.store.lastReset.detectedAt)).not.toBeNaN();
      expect(list.upstreams.map((u: { id: string; state: string }) => [u.id, u.state])).toEqual([
        ['calc', 'ACTIVE'],
        ['r1', 'ACTIVE'],
        ['r2', 'ACTIVE'],
      ]);
      expect(await toolNames(gateway)).toEqual(expect.arrayContaining(['r1__add', 'r2__add']));
      await gateway.waitForOutput(/The registration store was reset/);
      expect(await resetsMetric(gateway)).toBe(1);
    }
    // the writes of both replicas together restored both registrations
    const restored =
      (await storeOf(a)).store.lastReset.restored + (await storeOf(b)).store.lastReset.restored;
    expect(restored).toBe(2);

    // deleting every registration empties the store, and is no reset
    expect((await admin(a, 'DELETE', '/admin/upstreams/r1')).status).toBe(200);
    expect((await admin(b, 'DELETE', '/admin/upstreams/r2')).status).toBe(200);
    for (const gateway of [a, b]) {
      await waitForTool(gateway, 'r1__add', false, 30_000);
      await waitForTool(gateway, 'r2__add', false, 30_000);
    }
    // two more reads of the store by each replica
    await new Promise((r) => setTimeout(r, 2500));
    expect(await client.hlen(hashOf(keyPrefix))).toBe(0);
    for (const gateway of [a, b]) expect((await storeOf(gateway)).store.resets).toBe(1);
  });

  it('after FLUSHALL the same: served throughout, written back, counted', async () => {
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'f1', url: s1.url })).status).toBe(
      202,
    );
    await waitForState(b, 'f1', 'ACTIVE', 30_000);
    const resets = (await storeOf(b)).store.resets as number;
    await client.flushall();
    await waitFor(async () => (await client.hexists(hashOf(keyPrefix), 'f1')) === 1, 30_000);
    for (const gateway of [a, b]) {
      await waitFor(async () => (await storeOf(gateway)).store.resets === resets + 1, 30_000);
      expect(await toolNames(gateway)).toContain('f1__add');
    }
    // a write on the re-seeded store works as before
    expect((await admin(b, 'PATCH', '/admin/upstreams/f1', { enabled: false })).status).toBe(200);
    await waitForState(a, 'f1', 'DISABLED', 30_000);
    expect((await admin(a, 'DELETE', '/admin/upstreams/f1')).status).toBe(200);
  });

  it('records that overlap in the store (an earlier version, a merge after a reset): every replica takes the oldest and fails the other naming it', async () => {
    const now = Date.now();
    await client.hset(
      hashOf(keyPrefix),
      'o2',
      rawRecord('o2', { url: s2.url, namePrefix: 'old__' }, now),
      'o1',
      rawRecord('o1', { url: s1.url, namePrefix: 'old__' }, now - 1000),
    );
    for (const gateway of [a, b]) {
      await waitForState(gateway, 'o1', 'ACTIVE', 30_000);
      const loser = await waitForState(gateway, 'o2', 'FAILED', 30_000);
      expect(loser.reason).toMatch(
        /^namePrefix: "old__" duplicates the namePrefix of registered upstream "o1"/,
      );
      await waitForTool(gateway, 'old__add', true, 30_000);
      expect(await routedTo(gateway, 'old__add', { o1: s1, o2: s2 })).toEqual(['o1']);
    }
  });

  it('a passthrough record in the store is FAILED on every replica and never pulled: no caller token reaches it', async () => {
    const harvester = await V2Upstream.start();
    try {
      await client.hset(
        hashOf(keyPrefix),
        'grab',
        rawRecord(
          'grab',
          { url: harvester.url, authorization: { mode: 'passthrough' } },
          Date.now(),
        ),
      );
      for (const gateway of [a, b]) {
        const record = await waitForState(gateway, 'grab', 'FAILED', 30_000);
        expect(record.reason).toMatch(/^authorization\.mode: passthrough is not accepted/);
        await rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: 'Bearer caller-token-3f1' });
      }
      expect(harvester.requests).toEqual([]);
    } finally {
      await harvester.stop();
    }
  });
});

/**
 * Two replicas on a Redis of the test's own that is flushed while one of them has not read
 * the last change yet. "Has not read it" is made certain by pausing that replica's process
 * (SIGSTOP: a replica starved of CPU or in a long pause); the other one is paused as well
 * before the flush, so the stale replica re-seeds the store first, then the other one
 * (operations §15 "When Redis comes back empty").
 */
describe('two replicas when Redis is flushed before one of them read the last change', () => {
  const keyPrefix = uniqueKeyPrefix();
  let own: OwnRedis;
  let client: Redis;
  let calc: V2Upstream;
  let s1: V2Upstream;
  let s2: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    own = await OwnRedis.start();
    client = redisClient(own.url);
    [calc, s1, s2] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
    // two-second refreshes: each replica reads the store every second while it runs
    [a, b] = await Promise.all([
      replica(own.url, keyPrefix, calc.url, 2),
      replica(own.url, keyPrefix, calc.url, 2),
    ]);
  }, 120_000);

  afterAll(async () => {
    // a stopped process acts on SIGTERM only once it runs again
    for (const gateway of [a, b]) gateway?.child.kill('SIGCONT');
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([calc?.stop(), s1?.stop(), s2?.stop()]);
    client?.disconnect();
    await own?.stop();
  });

  const pause = (gateway: GatewayProcess): void => {
    gateway.child.kill('SIGSTOP');
  };
  const resume = (gateway: GatewayProcess): void => {
    gateway.child.kill('SIGCONT');
  };
  const resets = async (gateway: GatewayProcess): Promise<number> =>
    (await admin(gateway, 'GET', '/admin/upstreams')).body.store.resets as number;
  const stored = async (id: string): Promise<any> => {
    const raw = await client.hget(hashOf(keyPrefix), id);
    return raw === null ? undefined : JSON.parse(raw);
  };

  /**
   * With `change` made on `a` while `b` is paused: `a` paused, the store flushed, `b` resumed
   * and waited for until it re-seeded the store (from its older view; `seededByB` looks at the
   * store then), then `a` resumed and waited for until it re-seeded too.
   */
  async function flushWhileBIsBehind(
    change: () => Promise<void>,
    seededByB: () => Promise<void>,
  ): Promise<void> {
    const before = await Promise.all([resets(a), resets(b)]);
    pause(b);
    await change();
    pause(a);
    await client.flushall();
    resume(b);
    await waitFor(
      async () => (await resets(b)) === before[1] + 1,
      30_000,
      () => `b never re-seeded the store:\n${b.output}`,
    );
    await seededByB();
    resume(a);
    await waitFor(
      async () => (await resets(a)) === before[0] + 1,
      30_000,
      () => `a never re-seeded the store:\n${a.output}`,
    );
  }

  it('DELETE dup on one replica, flush before the other read it: the other re-seeds dup first, and dup is deleted again, in the store and on both replicas', async () => {
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'dup', url: s1.url })).status).toBe(
      202,
    );
    await waitForState(b, 'dup', 'ACTIVE', 30_000);
    await waitForTool(b, 'dup__add', true, 30_000);

    const before = await admin(a, 'GET', '/admin/upstreams/dup');
    await flushWhileBIsBehind(
      async () => {
        expect((await admin(a, 'DELETE', '/admin/upstreams/dup')).status).toBe(200);
      },
      // b wrote back the record it had applied: the fault this guards against
      async () => expect((await stored('dup'))?.version).toBe(before.body.version),
    );
    await waitFor(
      async () => (await stored('dup')) === undefined,
      30_000,
      () => `dup is in the store again:\n${a.output}\n${b.output}`,
    );
    expect(await client.hget(`${hashOf(keyPrefix)}:tombstones`, 'dup')).toMatch(
      new RegExp(`^${before.body.version}:\\d+$`),
    );
    await a.waitForOutput(/1 removed again \(deleted before the reset/);
    for (const gateway of [a, b]) {
      await waitFor(
        async () => (await admin(gateway, 'GET', '/admin/upstreams/dup')).status === 404,
        30_000,
        () => `dup is registered again:\n${gateway.output}`,
      );
      await waitForTool(gateway, 'dup__add', false, 30_000);
    }
    // a write on b reads the store first: it is still deleted there
    expect((await admin(b, 'PATCH', '/admin/upstreams/dup', { enabled: false })).status).toBe(404);
    expect(await stored('dup')).toBeUndefined();
    // registering it again is a new registration, above every version seen before
    const again = await admin(b, 'POST', '/admin/upstreams', { id: 'dup', url: s2.url });
    expect(again.status).toBe(202);
    await waitForState(a, 'dup', 'ACTIVE', 30_000);
    expect((await admin(a, 'DELETE', '/admin/upstreams/dup')).status).toBe(200);
    await waitFor(
      async () => (await admin(b, 'GET', '/admin/upstreams/dup')).status === 404,
      30_000,
    );
  });

  it('PATCH on one replica, flush before the other read it: the older copy re-seeded first gives way to the newer one', async () => {
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'pat', url: s1.url })).status).toBe(
      202,
    );
    const older = await waitForState(b, 'pat', 'ACTIVE', 30_000);
    let patched: any;
    await flushWhileBIsBehind(
      async () => {
        const answer = await admin(a, 'PATCH', '/admin/upstreams/pat', { enabled: false });
        expect(answer.status).toBe(200);
        patched = answer.body;
      },
      async () =>
        expect(await stored('pat')).toMatchObject({
          version: older.version,
          upstream: { enabled: true },
        }),
    );
    await waitFor(
      async () => (await stored('pat'))?.version === patched.version,
      30_000,
      () => `the store kept the older copy: ${a.output}\n${b.output}`,
    );
    expect(await stored('pat')).toMatchObject({ upstream: { enabled: false } });
    for (const gateway of [a, b]) {
      const record = await waitForState(gateway, 'pat', 'DISABLED', 30_000);
      expect(record.version).toBe(patched.version);
    }
    // the If-Match of the version before the PATCH is refused on both replicas
    for (const gateway of [b, a]) {
      const stale = await admin(
        gateway,
        'PATCH',
        '/admin/upstreams/pat',
        { enabled: true },
        ADMIN_TOKEN,
        { 'if-match': `"${older.version}"` },
      );
      expect(stale.status).toBe(409);
    }
    expect((await admin(b, 'DELETE', '/admin/upstreams/pat')).status).toBe(200);
  });

  it('POST of a new id on one replica, flush before the other read it: the replica that accepted it writes it back', async () => {
    let created: any;
    await flushWhileBIsBehind(
      async () => {
        const answer = await admin(a, 'POST', '/admin/upstreams', { id: 'fresh', url: s2.url });
        expect(answer.status).toBe(202);
        created = answer.body;
      },
      async () => expect(await stored('fresh')).toBeUndefined(),
    );
    await waitFor(async () => (await stored('fresh'))?.version === created.version, 30_000);
    for (const gateway of [a, b]) await waitForState(gateway, 'fresh', 'ACTIVE', 30_000);
    expect((await admin(b, 'DELETE', '/admin/upstreams/fresh')).status).toBe(200);
  });
});
