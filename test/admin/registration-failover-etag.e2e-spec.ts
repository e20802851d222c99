import { waitFor } from '../support/gateway-process';
import { ADMIN_TOKEN, admin } from './admin-support';
import { failoverPair, hashOf } from './failover-pair';

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
  const pair = failoverPair();

  it('an If-Match of the X registered before the failover (lost) never matches the X registered on the new master (another URL): 409', async () => {
    const { keyPrefix, r1, r2, proxy, c2, s1, s2, a, b } = pair;
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
