import type Redis from 'ioredis';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { OwnRedis, redisClient, uniqueKeyPrefix } from '../support/redis';
import { SwitchableProxy } from '../support/switchable-proxy';
import { ADMIN_TOKEN, admin } from './admin-support';

const hashOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

/**
 * docs/operations.md §5 "What a failover may lose" — Registrations: a replica that reads the store
 * under the same marker from another master writes back what it applied that the store lacks
 * "while their version is above the store's version counter". Only "a registration created on a
 * replica that died in the same moment, and that no other replica read, is lost".
 * §15: versions are drawn from one counter and never reused.
 *
 * Here the same id is registered anew on the promoted master (another URL) before the creator
 * of the lost X reads it: the new X must not draw the lost X's version, or the ETag a client
 * kept for the lost one would match it (registration-store-scripts.ts ON_MASTER).
 */
describe(`a failover to a replica that missed the last registration, then the same id registered anew on another replica`, () => {
  const keyPrefix = uniqueKeyPrefix();
  let r1: OwnRedis;
  let r2: OwnRedis;
  let proxy: SwitchableProxy;
  let c2: Redis;
  let s1: V2Upstream;
  let s2: V2Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  const replica = async (): Promise<GatewayProcess> => {
    const g = GatewayProcess.spawn({
      mcp: gatewayConfig([], {
        redis: { keyPrefix },
        registry: { refreshIntervalSeconds: 2 },
        upstreams: [upstream('calc', s1.url)],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: proxy.url },
    });
    await g.waitForListening(60_000);
    return g;
  };

  beforeAll(async () => {
    [r1, r2] = await Promise.all([OwnRedis.start(), OwnRedis.start()]);
    c2 = redisClient(r2.url);
    await c2.call('REPLICAOF', '127.0.0.1', String(r1.port));
    proxy = await SwitchableProxy.start(r1.port);
    [s1, s2] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
    [a, b] = await Promise.all([replica(), replica()]);
  }, 120_000);

  afterAll(async () => {
    for (const g of [a, b]) g?.child.kill('SIGCONT');
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([s1?.stop(), s2?.stop()]);
    c2?.disconnect();
    await proxy?.stop();
    await Promise.all([r1?.stop(), r2?.stop()]);
  });

  it('an If-Match of the X registered before the failover (lost) never matches the X registered on the new master (another URL): 409', async () => {
    const w = await admin(a, 'POST', '/admin/upstreams', { id: 'w', url: s1.url });
    expect(w.status).toBe(202);
    await waitFor(async () => (await admin(b, 'GET', '/admin/upstreams/w')).status === 200, 30_000);
    await waitFor(async () => (await c2.hexists(hashOf(keyPrefix), 'w')) === 1, 10_000);
    await waitFor(
      async () => /master_link_status:up/.test(String(await c2.call('INFO', 'replication'))),
      10_000,
    );
    b.child.kill('SIGSTOP');
    await c2.call('REPLICAOF', 'NO', 'ONE');
    // the client registers x at URL s2 and keeps its ETag; the write is lost in the failover
    const x = await admin(a, 'POST', '/admin/upstreams', { id: 'x', url: s2.url });
    expect(x.status).toBe(202);
    const clientTag = x.headers.get('etag') ?? '';
    a.child.kill('SIGSTOP');
    await r1.stop();
    proxy.switchTo(r2.port);
    b.child.kill('SIGCONT');
    // someone else registers x anew after the failover, at another URL
    let x2: Awaited<ReturnType<typeof admin>> | undefined;
    await waitFor(
      async () => {
        x2 = await admin(b, 'POST', '/admin/upstreams', {
          id: 'x',
          url: s1.url,
          namePrefix: 'x2_',
        });
        return x2.status === 202;
      },
      30_000,
      () => `b never registered x: ${JSON.stringify(x2?.body)}\n${b.output}`,
    );
    a.child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 4000));
    // the first client disables "its" x, conditionally on the ETag it was given
    const patched = await admin(b, 'PATCH', '/admin/upstreams/x', { enabled: false }, ADMIN_TOKEN, {
      'if-match': clientTag,
    });
    const stored = JSON.parse((await c2.hget(hashOf(keyPrefix), 'x')) ?? '{}');
    expect({
      sameTag: x2?.headers.get('etag') === clientTag,
      patch: patched.status,
      storedEnabled: stored.upstream?.enabled,
    }).toEqual({ sameTag: false, patch: 409, storedEnabled: true });
  });
});
