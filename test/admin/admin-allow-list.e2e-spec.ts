import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { stopAfterEach } from '../support/cleanup';
import { ADMIN_TOKEN, admin, startGateway, waitForState } from './admin-support';

/**
 * docs/operations.md §15 "What may be registered": what may be registered is bounded by
 * mcp.admin.allowedUpstreamUrls and the address rules: no link-local or cloud metadata address, no
 * loopback outside the local profile unless allowed. The host name is resolved and every address
 * checked.
 */
describe('/admin/upstreams allow-list', () => {
  let calc: V2Upstream;
  let other: V2Upstream;
  const track = stopAfterEach();

  beforeAll(async () => {
    [calc, other] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
  });

  afterAll(async () => {
    await Promise.all([calc?.stop(), other?.stop()]);
  });

  const start = (profile: string, adminSection?: Record<string, unknown>) =>
    startGateway(
      {
        mcp: {
          ...gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
          ...(adminSection === undefined ? {} : { admin: adminSection }),
        },
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, APP_PROFILE: profile },
        waitReady: true,
      },
      track,
    );

  it('outside the local profile a loopback address is refused, by address or by a name that resolves to one', async () => {
    const gateway = await start('staging');
    const byAddress = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
    });
    expect(byAddress.status).toBe(400);
    expect(byAddress.body.problems).toEqual([
      expect.stringMatching(
        /^url: host "127\.0\.0\.1" resolves to 127\.0\.0\.1, a loopback address/,
      ),
    ]);
    const byName = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: `http://localhost:${other.port}/mcp`,
    });
    expect(byName.status).toBe(400);
    expect(byName.body.problems).toEqual([
      expect.stringMatching(/^url: host "localhost" resolves to .*a loopback address/),
    ]);
    const v6 = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: `http://[::1]:${other.port}/mcp`,
    });
    expect(v6.status).toBe(400);
    expect((await admin(gateway, 'GET', '/admin/upstreams')).body.upstreams).toHaveLength(1);
  });

  it('cloud metadata and link-local addresses are refused even under the local profile', async () => {
    const gateway = await start('local');
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/mcp',
      'http://100.100.100.200/mcp',
    ]) {
      const answer = await admin(gateway, 'POST', '/admin/upstreams', { id: 'meta', url });
      expect(answer.status).toBe(400);
      expect(answer.body.problems).toEqual([expect.stringContaining('a cloud metadata address')]);
    }
    for (const url of ['http://169.254.10.1:8080/mcp', 'http://[fe80::1]/mcp']) {
      const answer = await admin(gateway, 'POST', '/admin/upstreams', { id: 'll', url });
      expect(answer.status).toBe(400);
      expect(answer.body.problems).toEqual([expect.stringContaining('a link-local address')]);
    }
    const zero = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'z',
      url: 'http://0.0.0.0:1/mcp',
    });
    expect(zero.status).toBe(400);
    const unresolvable = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'nx',
      url: 'http://no-such-host.invalid/mcp',
    });
    expect(unresolvable.status).toBe(400);
    expect(unresolvable.body.problems).toEqual([
      expect.stringMatching(/^url: host "no-such-host\.invalid" does not resolve/),
    ]);
    // the local profile allows loopback: the demo registers a server on 127.0.0.1
    expect(
      (await admin(gateway, 'POST', '/admin/upstreams', { id: 'other', url: other.url })).status,
    ).toBe(202);
    await waitForState(gateway, 'other', 'ACTIVE');
  });

  it('allowedUpstreamUrls bounds the URLs, and allowLoopback or allowedAddressRanges lift the address rules', async () => {
    const gateway = await start('staging', {
      allowedUpstreamUrls: [`http://127.0.0.1:${other.port}/mcp`, 'https://*.tools.example'],
      allowedAddressRanges: ['127.0.0.0/8'],
    });
    const elsewhere = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'calc2',
      url: `http://127.0.0.1:${calc.port}/mcp`,
      namePrefix: 'c2_',
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.problems).toEqual([
      expect.stringMatching(/^url: not allowed by mcp\.admin\.allowedUpstreamUrls/),
    ]);
    const otherPath = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: `http://127.0.0.1:${other.port}/mcpx`,
    });
    expect(otherPath.status).toBe(400);
    const allowed = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
    });
    expect(allowed.status).toBe(202);
    await waitForState(gateway, 'other', 'ACTIVE');

    const loopback = await start('staging', { allowLoopback: true });
    expect(
      (await admin(loopback, 'POST', '/admin/upstreams', { id: 'other', url: other.url })).status,
    ).toBe(202);
  });

  it('a broken allow-list stops the boot naming every broken entry', async () => {
    const gateway = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
        admin: {
          allowedUpstreamUrls: ['ftp://x', 'http://a:99999'],
          allowedAddressRanges: ['10.0.0.0/33', 'nonsense'],
          scope: 'has space',
        },
      },
    });
    expect(await gateway.waitForExit()).toBe(1);
    for (const field of [
      'mcp.admin.allowedUpstreamUrls[0]',
      'mcp.admin.allowedUpstreamUrls[1]',
      'mcp.admin.allowedAddressRanges[0]',
      'mcp.admin.allowedAddressRanges[1]',
      'mcp.admin.scope',
    ])
      expect(gateway.stderr).toContain(field);
  });
});
