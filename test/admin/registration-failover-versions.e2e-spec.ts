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
 * Here the replica that created X does not die, so X is written back. Another replica may write
 * on the promoted master before the creator's next read: that write must not draw X's version
 * again (the counter is raised on a new master), and the write-back must still take X for a lost
 * write, not a deleted one (registration-store-scripts.ts ON_MASTER).
 */
function scenario(intervening: boolean): void {
  describe(`a failover to a replica that missed the last registration, ${intervening ? 'then a write on another replica before the creator re-reads' : 'with no write in between'}`, () => {
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

    it('X (202 on replica a, a alive) is written back after the failover, and no other registration gets its version', async () => {
      const w = await admin(a, 'POST', '/admin/upstreams', { id: 'w', url: s1.url });
      expect(w.status).toBe(202);
      await waitFor(
        async () => (await admin(b, 'GET', '/admin/upstreams/w')).status === 200,
        30_000,
      );
      // the replica has everything so far (marker, counter, w)
      await waitFor(async () => (await c2.hexists(hashOf(keyPrefix), 'w')) === 1, 10_000);
      await waitFor(
        async () => /master_link_status:up/.test(String(await c2.call('INFO', 'replication'))),
        10_000,
      );

      // b is slow (it will not have read X); the replica stops following the master
      b.child.kill('SIGSTOP');
      await c2.call('REPLICAOF', 'NO', 'ONE');
      // X is acknowledged by the old master only (asynchronous replication: lost in the failover)
      const x = await admin(a, 'POST', '/admin/upstreams', { id: 'x', url: s2.url });
      expect(x.status).toBe(202);
      expect(await c2.hexists(hashOf(keyPrefix), 'x')).toBe(0);

      // failover: the old master dies, the promoted replica serves the address
      a.child.kill('SIGSTOP');
      await r1.stop();
      proxy.switchTo(r2.port);
      b.child.kill('SIGCONT');
      let y: Awaited<ReturnType<typeof admin>> | undefined;
      if (intervening)
        await waitFor(
          async () => {
            y = await admin(b, 'POST', '/admin/upstreams', {
              id: 'y',
              url: s1.url,
              namePrefix: 'y_',
            });
            return y.status === 202;
          },
          30_000,
          () => `b never registered y: ${JSON.stringify(y?.body)}\n${b.output}`,
        );
      a.child.kill('SIGCONT');
      // a reads the store (every second) and writes back what it applied
      await waitFor(
        () => /another Redis master|could not be read|answers again/.test(a.output),
        15_000,
      ).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5000));

      const stored = await c2.hget(hashOf(keyPrefix), 'x');
      const onA = await admin(a, 'GET', '/admin/upstreams/x');
      const onB = await admin(b, 'GET', '/admin/upstreams/x');
      expect({
        yVersionDiffersFromX: !intervening || y?.body?.version !== x.body.version,
        storedX: stored === null ? null : JSON.parse(stored).upstream?.url,
        onA: onA.status,
        onB: onB.status,
      }).toEqual({ yVersionDiffersFromX: true, storedX: s2.url, onA: 200, onB: 200 });
    });
  });
}

scenario(false);
scenario(true);
