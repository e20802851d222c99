import type Redis from 'ioredis';
import { ADMIN_TOKEN, admin, waitForState } from '../admin/admin-support';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V2Upstream } from '../support/mcp-upstreams';
import { SHARED_REDIS_URL, deleteKeys, redisClient, uniqueKeyPrefix } from '../support/redis';

/** The hash registrations live in (operations §15 "Shared and durable"). */
const hashOf = (keyPrefix: string): string => `${keyPrefix}:{mcp-gateway-test}:admin:upstreams`;

function gateway(
  keyPrefix: string,
  upstreams: readonly Record<string, unknown>[],
): Promise<GatewayProcess> {
  return GatewayProcess.startPatiently({
    mcp: gatewayConfig([], {
      redis: { keyPrefix },
      registry: { refreshIntervalSeconds: 2 },
      upstreams,
    }),
    env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: SHARED_REDIS_URL },
  });
}

/**
 * docs/operations.md §15: a stored registration that breaks a rule "after a config change" is
 * `FAILED` with the reason, and "Delete it (or free the room) and register again". When the new
 * configuration adds an upstream with the id of a stored registration, every replica on that
 * configuration lists the registration (`origin: "registered"`, `FAILED`, reason `id: "…" is
 * now a configured upstream`), and its DELETE removes the stored record (not the configured
 * upstream): nothing keeps its published-name prefix taken or its place under maxRegistrations.
 */
describe('a registration whose id the configuration takes over later', () => {
  const redis: Redis = redisClient();
  const keyPrefix = uniqueKeyPrefix();
  let s1: V2Upstream;
  let s2: V2Upstream;
  let calc: V2Upstream;
  let before: GatewayProcess | undefined;
  let after: GatewayProcess | undefined;

  beforeAll(async () => {
    [s1, s2, calc] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V2Upstream.start(),
    ]);
  });

  afterAll(async () => {
    await Promise.all([before?.stop(), after?.stop()]);
    await Promise.all([s1?.stop(), s2?.stop(), calc?.stop()]);
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('is listed FAILED on the new configuration and can still be deleted there', async () => {
    // the old configuration: `tickets` is registered at runtime
    before = await gateway(keyPrefix, [upstream('calc', calc.url)]);
    const posted = await admin(before, 'POST', '/admin/upstreams', {
      id: 'tickets',
      url: s1.url,
      namePrefix: 'tix__',
    });
    expect(posted.status).toBe(202);
    await before.stop();
    before = undefined;

    // the new configuration configures an upstream `tickets` (another prefix)
    after = await gateway(keyPrefix, [
      upstream('calc', calc.url),
      upstream('tickets', s2.url, { namePrefix: 'cfgtix__' }),
    ]);
    const list = await admin(after, 'GET', '/admin/upstreams');
    const registered = list.body.upstreams.find(
      (u: any) => u.id === 'tickets' && u.origin === 'registered',
    );
    expect(registered).toMatchObject({
      state: 'FAILED',
      reason: 'id: "tickets" is now a configured upstream',
    });

    // "Delete it … and register again": the stored registration is removed
    const deleted = await admin(after, 'DELETE', '/admin/upstreams/tickets');
    expect({ status: deleted.status, message: deleted.body?.message }).toEqual({
      status: 200,
      message: undefined,
    });
    expect(await redis.hexists(hashOf(keyPrefix), 'tickets')).toBe(0);

    // and its prefix is free again for a new registration
    const reuse = await admin(after, 'POST', '/admin/upstreams', {
      id: 'tickets2',
      url: s1.url,
      namePrefix: 'tix__',
    });
    expect({ status: reuse.status, problems: reuse.body?.problems }).toEqual({
      status: 202,
      problems: undefined,
    });
    await waitForState(after, 'tickets2', 'ACTIVE');
  });
});
