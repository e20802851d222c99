import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * A manifest's `revision` is the Tool Service's text, only shown and logged (contract §5). A
 * hostile service can make it as long as `maxManifestBytes` allows and change it every round:
 * what the gateway keeps of it (bundle status, the catalog history of the last 50 changes, the
 * log lines of each round) must stay bounded like everything else a source sends
 * (docs/security.md "Hostile sources: bounded work"), not grow with the service's whim.
 */
describe('a manifest revision as long as the manifest cap allows', () => {
  const track = stopAfterEach();

  it('is kept, shown and logged at most 256 characters long', async () => {
    const long = (n: number): string => `${n}-${'r'.repeat(300_000)}`;
    const tools = [tool({ name: 'rev.a' })];
    const service = track(await TestToolService.start(manifest('rev', tools, long(0))));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('rev', service, 'rev.')], {
          registry: { refreshIntervalSeconds: 1, refreshJitterSeconds: 0 },
        }),
        waitReady: true,
      }),
    );
    const published = async (): Promise<number> => {
      const res = await fetch(`${gateway.managementUrl}/actuator/catalog/history`);
      const history = (await res.json()) as { entries: { kind: string }[] };
      return history.entries.filter((e) => e.kind === 'published').length;
    };
    for (let n = 1; n <= 3; n++) {
      service.setManifest(manifest('rev', tools, long(n)));
      await waitFor(async () => (await published()) >= n + 1, 60_000);
    }

    const status = await gateway.bundleStatus('rev');
    expect(status.revision.startsWith('3-rrr')).toBe(true);
    expect(status.revision.length).toBeLessThanOrEqual(256);
    const history = await (await fetch(`${gateway.managementUrl}/actuator/catalog/history`)).text();
    expect(history.length).toBeLessThan(64 * 1024);
    const longest = Math.max(...gateway.output.split('\n').map((line) => line.length));
    expect(longest).toBeLessThan(16 * 1024);
  });
});
