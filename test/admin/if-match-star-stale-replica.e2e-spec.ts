import type Redis from 'ioredis';
import { ADMIN_TOKEN, admin } from '../admin/admin-support';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V2Upstream } from '../support/mcp-upstreams';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

/** The hash registrations live in (operations §15 "Shared and durable"). */
const hashOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

/** A replica that reads the registration store at start and then only every 30 s. */
function replica(keyPrefix: string, calcUrl: string): Promise<GatewayProcess> {
  return GatewayProcess.startPatiently({
    mcp: gatewayConfig([], {
      redis: { keyPrefix },
      registry: { refreshIntervalSeconds: 60 },
      upstreams: [upstream('calc', calcUrl)],
    }),
    env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: SHARED_REDIS_URL },
  });
}

/**
 * docs/operations.md §15 "Versions": a PATCH or DELETE is a compare-and-set against "the
 * `If-Match` one when the client sends it (`"<version>"`, a list of them, or `*`)"; `*` is
 * whatever version is stored when the change is written (RFC 9110 §13.1.1: true whenever a
 * current representation exists). A replica that has not read the store since the id was
 * deleted and registered again on another replica still changes (PATCH) or deletes the
 * registration stored now when the client says `If-Match: *`, where a stale copy's version
 * would have been a 409.
 */
describe('If-Match: * on a replica whose view of the store is stale', () => {
  const redis: Redis = redisClient();
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
    a = await replica(keyPrefix, calc.url);
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'star', url: s1.url })).status).toBe(
      202,
    );
    // b reads `star` at its start, then not for 30 s
    b = await replica(keyPrefix, calc.url);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([calc?.stop(), s1?.stop(), s2?.stop()]);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('PATCH with If-Match: * applies to the registration stored now (not 409)', async () => {
    expect((await admin(b, 'GET', '/admin/upstreams/star')).body).toMatchObject({ url: s1.url });

    // deleted and registered again on a; b has not read it yet
    expect((await admin(a, 'DELETE', '/admin/upstreams/star')).status).toBe(200);
    const again = await admin(a, 'POST', '/admin/upstreams', { id: 'star', url: s2.url });
    expect(again.status).toBe(202);

    const patched = await admin(
      b,
      'PATCH',
      '/admin/upstreams/star',
      { enabled: false },
      ADMIN_TOKEN,
      {
        'if-match': '*',
      },
    );
    // `*`: any stored version; the record stored now (s2) is disabled
    expect({ status: patched.status, message: patched.body?.message }).toEqual({
      status: 200,
      message: undefined,
    });
    expect(JSON.parse((await redis.hget(hashOf(keyPrefix), 'star')) ?? '{}')).toMatchObject({
      upstream: { url: s2.url, enabled: false },
    });
  });

  it('DELETE with If-Match: * deletes whatever version is stored (not 409)', async () => {
    // again: registered anew on a, b's view still stale (it read the store with the 409 above,
    // so make it stale once more)
    expect((await admin(b, 'GET', '/admin/upstreams/star')).status).toBe(200);
    expect((await admin(a, 'DELETE', '/admin/upstreams/star')).status).toBe(200);
    expect((await admin(a, 'POST', '/admin/upstreams', { id: 'star', url: s1.url })).status).toBe(
      202,
    );

    const deleted = await admin(b, 'DELETE', '/admin/upstreams/star', undefined, ADMIN_TOKEN, {
      'if-match': '*',
    });
    expect({ status: deleted.status, body: deleted.body }).toEqual({
      status: 200,
      body: { id: 'star', deleted: true },
    });
    expect(await redis.hexists(hashOf(keyPrefix), 'star')).toBe(0);
  });
});
