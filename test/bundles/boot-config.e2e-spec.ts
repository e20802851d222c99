import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig } from '../support/fixtures';

const svc = {
  manifestUrl: 'http://127.0.0.1:9/tool-manifest',
  baseEndpoint: 'http://127.0.0.1:9/mcp',
};
const other = { manifestUrl: 'http://127.0.0.1:9/m2', baseEndpoint: 'http://127.0.0.1:9/t2' };

/**
 * A bad config stops the boot with a non-zero exit and one message naming every broken field
 * (docs/operations.md §1).
 */
describe('the gateway refuses to boot on a bad config', () => {
  async function refused(options: Parameters<typeof GatewayProcess.spawn>[0]): Promise<string> {
    const gateway = GatewayProcess.spawn(options);
    const code = await gateway.waitForExit();
    expect(code).not.toBe(0);
    expect(gateway.stdout).not.toContain('listening');
    return gateway.stderr;
  }

  it.each([
    [
      'discovery enabled with no bundles',
      gatewayConfig([]),
      'mcp.bundles',
      'no bundle is configured',
    ],
    [
      'two bundles sharing an id',
      gatewayConfig([bundle('a', svc, 'a.'), bundle('a', other, 'b.')]),
      'mcp.bundles[1].id',
      'duplicates',
    ],
    [
      'two bundles sharing a namePrefix',
      gatewayConfig([bundle('a', svc, 'x.'), bundle('b', other, 'x.')]),
      'mcp.bundles[1].namePrefix',
      'duplicates',
    ],
    [
      'a namePrefix that is a prefix of another (a. and a.b.)',
      gatewayConfig([bundle('a', svc, 'a.'), bundle('b', other, 'a.b.')]),
      'mcp.bundles[1].namePrefix',
      'starts with',
    ],
    [
      'a manifestUrl that is not http(s)',
      gatewayConfig([bundle('a', { ...svc, manifestUrl: 'ftp://x/y' }, 'a.')]),
      'mcp.bundles[0].manifestUrl',
      'http(s)',
    ],
    [
      'a baseEndpoint that is not a URL',
      gatewayConfig([bundle('a', { ...svc, baseEndpoint: 'tool-service' }, 'a.')]),
      'mcp.bundles[0].baseEndpoint',
      'http(s)',
    ],
    [
      'a timeout that is not a positive integer',
      gatewayConfig([bundle('a', svc, 'a.')], { discovery: { readTimeoutMillis: 0 } }),
      'mcp.discovery.readTimeoutMillis',
      'positive integer',
    ],
    [
      'a limit that is not an integer',
      gatewayConfig([bundle('a', svc, 'a.')], { discovery: { maxToolsPerBundle: 2.5 } }),
      'mcp.discovery.maxToolsPerBundle',
      'positive integer',
    ],
  ])('%s', async (_label, mcp, field, reason) => {
    const stderr = await refused({ mcp });
    expect(stderr).toContain(field);
    expect(stderr).toContain(reason);
  });

  it('names every broken field in one message', async () => {
    const stderr = await refused({
      mcp: gatewayConfig(
        [bundle('a', { ...svc, manifestUrl: 'nope' }, 'a.'), bundle('a', other, 'a.')],
        {
          discovery: { connectTimeoutMillis: -1, maxManifestBytes: 'big' },
          registry: { refreshIntervalSeconds: 0 },
        },
      ),
    });
    for (const field of [
      'mcp.discovery.connectTimeoutMillis',
      'mcp.discovery.maxManifestBytes',
      'mcp.registry.refreshIntervalSeconds',
      'mcp.bundles[0].manifestUrl',
      'mcp.bundles[1].id',
      'mcp.bundles[1].namePrefix',
    ]) {
      expect(stderr).toContain(field);
    }
    expect(stderr).toMatch(/6 problems/);
  });

  it('refuses a non-local profile with discovery disabled, saying so plainly', async () => {
    const stderr = await refused({
      mcp: { identity: 'x', discovery: { enabled: false }, bundles: [] },
      env: { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: `k:${Buffer.alloc(32, 1).toString('base64')}` },
    });
    expect(stderr).toContain('mcp.discovery.enabled');
    expect(stderr).toContain('only the local profile may run without bundle discovery');
  });

  it('refuses a fallbackManifestFile outside the local profile', async () => {
    const stderr = await refused({
      mcp: gatewayConfig([bundle('a', svc, 'a.', { fallbackManifestFile: 'file:./x.json' })]),
      env: { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: `k:${Buffer.alloc(32, 1).toString('base64')}` },
    });
    expect(stderr).toContain('mcp.bundles[0].fallbackManifestFile');
    expect(stderr).toContain('only allowed in the local profile');
  });

  it('refuses a profile whose file does not exist', async () => {
    const stderr = await refused({ env: { APP_PROFILE: 'staging' } });
    expect(stderr).toContain('config/application-staging.yaml');
  });

  it('boots with the repository profile files (local) and with the ocp profile given session keys', async () => {
    const local = await GatewayProcess.start({});
    await local.stop();
    expect(local.output).toContain('profile local');
    const ocp = await GatewayProcess.start({
      env: { APP_PROFILE: 'ocp', MCP_SESSION_KEYS: `k:${Buffer.alloc(32, 1).toString('base64')}` },
    });
    await ocp.stop();
    expect(ocp.output).toContain('profile ocp');
  });
});
