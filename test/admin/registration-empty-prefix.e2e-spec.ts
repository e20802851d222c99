import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { stopAfterEach } from '../support/cleanup';
import { ADMIN_TOKEN, admin, startGateway, toolNames, waitForState } from '../admin/admin-support';

/**
 * docs/operations.md §10: `namePrefix: ""` only when the upstream is the only enabled source
 * ("names of two sources could collide"); §15 "Errors": 400 for "the boot validation of
 * mcp.upstreams[] (… `""` as prefix only for a sole source …)", and a registration is checked
 * "as if all were in one config file" (registration-rules.ts). The problem is raised on the
 * path of the source that has the "" prefix (here the configured one), not the registration's:
 * it is still the registration's refusal.
 */
describe('a registration beside a configured source with the prefix "" (the sole enabled source)', () => {
  const track = stopAfterEach();
  let s1: V2Upstream;
  let s2: V2Upstream;

  beforeAll(async () => {
    [s1, s2] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
  });
  afterAll(async () => {
    await Promise.all([s1?.stop(), s2?.stop()]);
  });

  const start = () =>
    startGateway(
      {
        // the sole enabled source publishes its tools unprefixed
        mcp: gatewayConfig([], { upstreams: [upstream('solo', s1.url, { namePrefix: '' })] }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
        waitReady: true,
      },
      track,
    );

  it('POST of a second, enabled upstream is 400 naming the "" source, which stays the only one served', async () => {
    const gateway = await start();
    expect((await toolNames(gateway)).sort()).toEqual(['add', 'shout']);
    const second = await admin(gateway, 'POST', '/admin/upstreams', { id: 'b', url: s2.url });
    if (second.status === 202) await waitForState(gateway, 'b', 'ACTIVE').catch(() => undefined);
    const names = (await toolNames(gateway)).sort();
    expect({ status: second.status, names }).toEqual({ status: 400, names: ['add', 'shout'] });
    expect(second.body.problems).toEqual([expect.stringContaining('configured upstream "solo"')]);
  });

  it('POST it disabled (allowed: one enabled source), then PATCH {"enabled": true} is 400, and it is not served', async () => {
    const gateway = await start();
    const off = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'b',
      url: s2.url,
      enabled: false,
    });
    expect(off.status).toBe(202);
    const on = await admin(gateway, 'PATCH', '/admin/upstreams/b', { enabled: true });
    if (on.status === 200) await waitForState(gateway, 'b', 'ACTIVE').catch(() => undefined);
    const names = (await toolNames(gateway)).sort();
    expect({ status: on.status, names }).toEqual({ status: 400, names: ['add', 'shout'] });
  });
});
