import { stopAfterEach } from '../support/cleanup';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** GET /actuator/toolBundles (contract §9) and the local fallback file (contract §3). */
describe('bundle status and the fallback file', () => {
  const track = stopAfterEach();
  const unusedUrl = {
    manifestUrl: 'http://127.0.0.1:9/tool-manifest',
    baseEndpoint: 'http://127.0.0.1:9/mcp',
  };

  it('lists every configured bundle, never-successful and disabled ones included, with exactly the contract fields', async () => {
    const service = track(
      await TestToolService.start(
        manifest('good', [tool({ name: 'good.a' }), tool({ name: 'good.b' })], 'rev-9'),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle('good', service, 'good.'),
          bundle('never', unusedUrl, 'never.'),
          bundle('off', unusedUrl, 'off.', { enabled: false }),
        ]),
      }),
    );
    await waitFor(async () =>
      (await gateway.toolBundles()).bundles.every(
        (b: any) => b.status !== 'unreachable' || b.lastAttemptAt,
      ),
    );
    const view = await gateway.toolBundles();
    expect(view.bundles.map((b: any) => b.id)).toEqual(['good', 'never', 'off']);
    const [good, never, off] = view.bundles;
    expect(Object.keys(good).sort()).toEqual(
      [
        'id',
        'status',
        'revision',
        'toolCount',
        'lastSuccessAt',
        'lastAttemptAt',
        'consecutiveFailures',
        'lastFailureReason',
        'source',
        'ageSeconds',
      ].sort(),
    );
    expect(good).toMatchObject({
      status: 'healthy',
      revision: 'rev-9',
      toolCount: 2,
      consecutiveFailures: 0,
      lastFailureReason: null,
      source: 'remote',
    });
    expect(Date.parse(good.lastSuccessAt)).not.toBeNaN();
    expect(never).toMatchObject({
      status: 'unreachable',
      revision: null,
      toolCount: 0,
      lastSuccessAt: null,
      consecutiveFailures: 1,
      lastFailureReason: 'ManifestConnectError',
    });
    expect(off).toMatchObject({ status: 'disabled', lastAttemptAt: null, consecutiveFailures: 0 });
    // all or nothing: one bundle never succeeded, so no catalog and not ready
    expect(view.catalog.published).toBe(false);
    expect(view.ready).toBe(false);
    const text = JSON.stringify(view);
    expect(text).not.toMatch(/http:|127\.0\.0\.1|manifestUrl|namePrefix|good\.a|"never\."/);
    // a disabled bundle is never fetched: nothing listens on port 9, and the log never names it as pulled
    expect(gateway.output).not.toMatch(/Bundle off:/);
  });

  it('serves the fallback file when the first remote pull fails in the local profile, with status fallback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-fb-'));
    const file = join(dir, 'fallback.json');
    writeFileSync(
      file,
      JSON.stringify(manifest('ins', [tool({ name: 'ins.sample' })], 'local-sample-v1')),
    );
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.live' })], 'live-1')),
    );
    const port = service.port;
    await service.stop();
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig(
          [bundle('ins', service, 'ins.', { fallbackManifestFile: `file:${file}` })],
          {
            registry: { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 },
          },
        ),
        waitReady: true,
      }),
    );
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'fallback',
      source: 'fallback',
      revision: 'local-sample-v1',
    });
    expect(
      (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map((t: any) => t.name),
    ).toEqual(['ins.sample']);

    // the remote comes up: its manifest replaces the fallback on the next cycle
    await service.listen(port);
    await waitFor(async () => (await gateway.bundleStatus('ins')).status === 'healthy', 5000);
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      source: 'remote',
      revision: 'live-1',
    });
    expect(
      (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map((t: any) => t.name),
    ).toEqual(['ins.live']);

    // and a later outage keeps the remote copy: the fallback file is never read over a remote success
    writeFileSync(
      file,
      JSON.stringify(manifest('ins', [tool({ name: 'ins.sample2' })], 'local-sample-v2')),
    );
    await service.stop();
    await waitFor(async () => (await gateway.bundleStatus('ins')).status === 'degraded', 5000);
    expect(
      (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map((t: any) => t.name),
    ).toEqual(['ins.live']);
  });

  it('does not read the fallback file when the first remote pull succeeds', async () => {
    const service = track(
      await TestToolService.start(manifest('ins', [tool({ name: 'ins.live' })], 'live-1')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle('ins', service, 'ins.', {
            fallbackManifestFile: 'file:/nonexistent/fallback.json',
          }),
        ]),
        waitReady: true,
      }),
    );
    expect(await gateway.bundleStatus('ins')).toMatchObject({
      status: 'healthy',
      source: 'remote',
    });
    expect(gateway.output).not.toContain('fallbackManifestFile unusable');
  });

  it('serves the legacy local JSON fixture when discovery is disabled in the local profile', async () => {
    const tools = track(await TestToolService.start({}));
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-fx-'));
    const file = join(dir, 'fixture.json');
    writeFileSync(
      file,
      JSON.stringify(manifest('local-fixture', [tool({ name: 'fixture.echo' })], 'fx-1')),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          identity: 'fx',
          discovery: { enabled: false },
          localFixture: { file, baseEndpoint: tools.baseEndpoint },
        },
        waitReady: true,
      }),
    );
    expect(
      (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map((t: any) => t.name),
    ).toEqual(['fixture.echo']);
    await callTool(gateway.mcpUrl, 'fixture.echo', { a: 1 });
    expect(tools.toolRequests('fixture.echo')).toHaveLength(1);
    expect(await gateway.bundleStatus('local-fixture')).toMatchObject({
      status: 'healthy',
      revision: 'fx-1',
      source: 'fixture',
    });
  });
});
