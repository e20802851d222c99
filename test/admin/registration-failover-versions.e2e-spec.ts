import { waitFor } from '../support/gateway-process';
import { admin } from './admin-support';
import { failoverPair, hashOf } from './failover-pair';

/** The registered virtual servers' hash of a store under `keyPrefix` (server-store.ts). */
const serversOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:virtual-servers`;

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
 *
 * The same for a virtual server registered at runtime (§16): VX, registered on a just before the
 * failover (201), is written back by a with its version (ETag), and served by both; VD, deleted
 * before the failover while b, paused, still served it, is not brought back by b: its version
 * is below the counter the new master came over with (server-store.ts RESTORE_SCRIPT).
 */
function scenario(intervening: boolean): void {
  describe(`a failover to a replica that missed the last registration, ${intervening ? 'then a write on another replica before the creator re-reads' : 'with no write in between'}`, () => {
    const pair = failoverPair();

    it('X and the virtual server VX (on replica a, a alive) are written back after the failover, VD deleted before it is not, and no other registration gets their version', async () => {
      const { keyPrefix, r1, r2, proxy, c2, s1, s2, a, b } = pair;
      const w = await admin(a, 'POST', '/admin/upstreams', { id: 'w', url: s1.url });
      expect(w.status).toBe(202);
      const vd = await admin(a, 'POST', '/admin/servers', { id: 'vd', tools: ['calc.*'] });
      expect(vd.status).toBe(201);
      await waitFor(
        async () => (await admin(b, 'GET', '/admin/servers/vd')).status === 200,
        30_000,
      );
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
      // VD is deleted, and the replica has the deletion; b still serves VD
      expect((await admin(a, 'DELETE', '/admin/servers/vd')).status).toBe(200);
      await waitFor(async () => (await c2.hexists(serversOf(keyPrefix), 'vd')) === 0, 10_000);
      await c2.call('REPLICAOF', 'NO', 'ONE');
      // X is acknowledged by the old master only (asynchronous replication: lost in the failover)
      const x = await admin(a, 'POST', '/admin/upstreams', { id: 'x', url: s2.url });
      expect(x.status).toBe(202);
      expect(await c2.hexists(hashOf(keyPrefix), 'x')).toBe(0);
      // and so is VX
      const vx = await admin(a, 'POST', '/admin/servers', { id: 'vx', tools: ['calc.*'] });
      expect(vx.status).toBe(201);
      const vxTag = vx.headers.get('etag');
      expect(vxTag).toMatch(/^"\d+"$/);
      expect(await c2.hexists(serversOf(keyPrefix), 'vx')).toBe(0);

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
      let vy: Awaited<ReturnType<typeof admin>> | undefined;
      if (intervening)
        await waitFor(
          async () => {
            vy = await admin(b, 'POST', '/admin/servers', { id: 'vy', tools: ['calc.*'] });
            return vy.status === 201;
          },
          30_000,
          () => `b never registered vy: ${JSON.stringify(vy?.body)}\n${b.output}`,
        );
      // b has read the new master (and written back what it lacks that a lost write drew):
      // VD, deleted before, is not among them. Checked before a, which deleted it and would
      // delete it again, reads the store
      const vdOnB = await waitFor(
        async () => (await admin(b, 'GET', '/admin/servers/vd')).status === 404,
        15_000,
      ).then(
        () => 404,
        () => 200,
      );
      const vdStored = await c2.hexists(serversOf(keyPrefix), 'vd');
      a.child.kill('SIGCONT');
      // a reads the store (every second) and writes back what it applied
      await waitFor(
        () => /another Redis master|could not be read|answers again/.test(a.output),
        15_000,
      ).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5000));
      // a reads the servers every 2 s, b reads a's write-back 2 s later
      const tagOf = async (g: typeof a): Promise<string | null> => {
        const got = await admin(g, 'GET', '/admin/servers/vx');
        return got.status === 200 ? got.headers.get('etag') : `${got.status}`;
      };
      await waitFor(
        async () => (await tagOf(a)) === vxTag && (await tagOf(b)) === vxTag,
        10_000,
      ).catch(() => undefined);

      const stored = await c2.hget(hashOf(keyPrefix), 'x');
      const onA = await admin(a, 'GET', '/admin/upstreams/x');
      const onB = await admin(b, 'GET', '/admin/upstreams/x');
      const storedVx = await c2.hget(serversOf(keyPrefix), 'vx');
      expect({
        yVersionDiffersFromX: !intervening || y?.body?.version !== x.body.version,
        storedX: stored === null ? null : JSON.parse(stored).upstream?.url,
        onA: onA.status,
        onB: onB.status,
        vyTagDiffersFromVx: !intervening || vy?.headers.get('etag') !== vxTag,
        storedVxVersion: storedVx === null ? null : `"${JSON.parse(storedVx).version}"`,
        vxOnA: await tagOf(a),
        vxOnB: await tagOf(b),
        vdOnB,
        vdStored,
        vdOnA: (await admin(a, 'GET', '/admin/servers/vd')).status,
      }).toEqual({
        yVersionDiffersFromX: true,
        storedX: s2.url,
        onA: 200,
        onB: 200,
        vyTagDiffersFromVx: true,
        storedVxVersion: vxTag,
        vxOnA: vxTag,
        vxOnB: vxTag,
        vdOnB: 404,
        vdStored: 0,
        vdOnA: 404,
      });
    }, 120_000);
  });
}

scenario(false);
scenario(true);
