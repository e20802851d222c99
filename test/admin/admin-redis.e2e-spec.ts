import { waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { stopAfterEach } from '../support/cleanup';
import {
  OwnRedis,
  SHARED_REDIS_URL,
  deleteKeys,
  redisClient,
  uniqueKeyPrefix,
} from '../support/redis';
import {
  ADMIN_TOKEN,
  admin,
  closedPort,
  toolNames,
  waitForState,
  waitForTool,
  startGateway,
} from './admin-support';

/**
 * docs/operations.md §15 "Shared and durable": with REDIS_URL, registrations live in Redis: every
 * replica picks a change up within one refresh interval, and a restart keeps them.
 */
describe('/admin/upstreams shared through Redis', () => {
  const redis = redisClient();
  const prefixes: string[] = [];
  let calc: V2Upstream;
  let other: V2Upstream;
  let legacy: V1Upstream;
  const track = stopAfterEach();

  beforeAll(async () => {
    [calc, other, legacy] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V1Upstream.start(),
    ]);
  });

  afterAll(async () => {
    await Promise.all([calc?.stop(), other?.stop(), legacy?.stop()]);
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  /** Two-second refreshes: a change must reach the other replica within one. */
  const replica = (keyPrefix: string) =>
    startGateway(
      {
        mcp: gatewayConfig([], {
          redis: { keyPrefix },
          registry: { refreshIntervalSeconds: 2 },
          upstreams: [upstream('calc', calc.url)],
        }),
        env: {
          MCP_ADMIN_TOKEN: ADMIN_TOKEN,
          REDIS_URL: SHARED_REDIS_URL,
          MCP_UPSTREAM_SECRET_OTHER_AUTH: 'Bearer other-7c1',
        },
        waitReady: true,
      },
      track,
    );

  const newPrefix = (): string => {
    const prefix = uniqueKeyPrefix();
    prefixes.push(prefix);
    return prefix;
  };

  it('a registration, a change and a deletion on one replica reach the other within one refresh interval', async () => {
    const keyPrefix = newPrefix();
    const a = await replica(keyPrefix);
    const b = await replica(keyPrefix);
    const posted = await admin(a, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
      authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_OTHER_AUTH' },
    });
    expect(posted.status).toBe(202);
    // one refresh interval (2 s), plus room for a loaded machine
    const onB = await waitForState(b, 'other', 'ACTIVE', 10_000);
    expect(onB).toMatchObject({
      origin: 'registered',
      createdBy: 'admin-token',
      era: '2026-07-28',
    });
    await waitForTool(b, 'other__add', true, 10_000);
    const listB = await admin(b, 'GET', '/admin/upstreams');
    expect(listB.body.storage).toBe('redis');

    // what Redis holds names the secret's variable, never its value
    const stored = await redis.hgetall(`${keyPrefix}:{mcp-gateway-test}:admin:upstreams`);
    expect(Object.keys(stored)).toEqual(['other']);
    expect(JSON.parse(stored.other ?? '{}')).toMatchObject({
      v: 1,
      upstream: {
        id: 'other',
        url: other.url,
        authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_OTHER_AUTH' },
      },
      createdBy: 'admin-token',
    });
    expect(stored.other).not.toContain('other-7c1');

    // a second replica cannot take the id either
    const again = await admin(b, 'POST', '/admin/upstreams', {
      id: 'other',
      url: legacy.url,
      namePrefix: 'l_',
    });
    expect(again.status).toBe(409);

    expect((await admin(b, 'PATCH', '/admin/upstreams/other', { enabled: false })).status).toBe(
      200,
    );
    await waitForState(a, 'other', 'DISABLED', 10_000);
    await waitForTool(a, 'other__add', false, 10_000);

    expect((await admin(a, 'DELETE', '/admin/upstreams/other')).status).toBe(200);
    await waitFor(
      async () => (await admin(b, 'GET', '/admin/upstreams/other')).status === 404,
      10_000,
    );
    expect(await toolNames(b)).toEqual(['calc__add', 'calc__shout']);
  });

  it('a restart keeps the registrations: a replica started afterwards serves them without any request', async () => {
    const keyPrefix = newPrefix();
    const first = await replica(keyPrefix);
    expect(
      (await admin(first, 'POST', '/admin/upstreams', { id: 'repo', url: legacy.url })).status,
    ).toBe(202);
    const before = await waitForState(first, 'repo', 'ACTIVE');
    await first.stop();

    const second = await replica(keyPrefix);
    const after = await waitForState(second, 'repo', 'ACTIVE');
    expect(after).toMatchObject({
      id: 'repo',
      url: legacy.url,
      createdAt: before.createdAt,
      createdBy: 'admin-token',
      era: '2025-11-25',
    });
    await waitForTool(second, 'repo__flaky');
  });

  it("a registration deleted and posted again under the same id with another URL never warm-starts from the first one's stored lists", async () => {
    const keyPrefix = newPrefix();
    const first = await replica(keyPrefix);
    expect(
      (await admin(first, 'POST', '/admin/upstreams', { id: 'z', url: other.url })).status,
    ).toBe(202);
    await waitForTool(first, 'z__add', true, 10_000);
    expect((await admin(first, 'DELETE', '/admin/upstreams/z')).status).toBe(200);
    // the same id, a server that does not answer
    const down = `http://127.0.0.1:${await closedPort()}/mcp`;
    expect((await admin(first, 'POST', '/admin/upstreams', { id: 'z', url: down })).status).toBe(
      202,
    );
    await first.stop();

    const second = await replica(keyPrefix);
    await second.waitForOutput(/Upstream z: the Redis copy was pulled from another URL/);
    expect(await toolNames(second)).toEqual(['calc__add', 'calc__shout']);
    const view = await admin(second, 'GET', '/admin/upstreams/z');
    expect(view.body.state).not.toBe('ACTIVE');
  });

  it('with Redis down the gateway still starts; a registration answers 503 and nothing is registered', async () => {
    const port = await closedPort();
    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], {
          redis: { keyPrefix: newPrefix() },
          upstreams: [upstream('calc', calc.url)],
        }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: `redis://127.0.0.1:${port}` },
        waitReady: true,
      },
      track,
    );
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
    });
    expect(posted.status).toBe(503);
    expect(posted.body.message).toMatch(
      /^The registration store \(Redis\) is unavailable; nothing was changed/,
    );
    const list = await admin(gateway, 'GET', '/admin/upstreams');
    expect(list.body).toMatchObject({ storage: 'redis' });
    expect(list.body.upstreams.map((u: { id: string }) => u.id)).toEqual(['calc']);
    expect(await toolNames(gateway)).toEqual(['calc__add', 'calc__shout']);
  });

  it('with Redis hanging (SIGSTOP), a write it times out on says the change may still be applied, and it is once Redis wakes; upstreams and virtual servers alike', async () => {
    const own = await OwnRedis.start();
    track({ stop: () => (own.resume(), own.stop()) });
    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], {
          redis: { keyPrefix: newPrefix(), commandTimeoutMillis: 500 },
          registry: { refreshIntervalSeconds: 2 },
          upstreams: [upstream('calc', calc.url)],
        }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: own.url },
        waitReady: true,
      },
      track,
    );
    // read once, so that the write goes straight to the store
    expect((await admin(gateway, 'GET', '/admin/upstreams')).status).toBe(200);
    own.pause();
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'late',
      url: other.url,
    });
    const server = await admin(gateway, 'POST', '/admin/servers', {
      id: 'lateserver',
      tools: ['calc__*'],
    });
    expect(posted.status).toBe(503);
    expect(posted.body.message).toMatch(
      /^The registration store \(Redis\) did not answer in time; the change may still be applied when it does/,
    );
    expect(posted.body.message).not.toContain('nothing was changed');
    expect(server.status).toBe(503);
    expect(server.body.message).toMatch(
      /^The store of virtual servers \(Redis\) did not answer in time; the change may still be applied/,
    );
    own.resume();
    // the commands Redis held ran when it woke: the refusals said they might
    await waitForState(gateway, 'late', 'ACTIVE');
    await waitFor(async () => {
      const servers = await admin(gateway, 'GET', '/admin/servers');
      return JSON.stringify(servers.body).includes('lateserver');
    }, 15_000);
  });
});
