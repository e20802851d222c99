import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** Tools whose names carry a version: every pull retires 80 names and publishes 80 new ones. */
function versioned(version: number): Record<string, unknown> {
  return manifest(
    'ver',
    Array.from({ length: 80 }, (_, i) => tool({ name: `ver.v${version}.tool${i}` })),
    `r${version}`,
  );
}

/** docs/operations.md §3: metric series of tools that leave the catalog are removed. */
describe('metric series follow the catalog', () => {
  const track = stopAfterEach();

  it('keeps only the series of published tools after 10 pulls that each retire 80 names', async () => {
    const service = track(await TestToolService.start(versioned(1)));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('ver', service, 'ver.')]),
        waitReady: true,
      }),
    );
    for (let version = 1; version <= 10; version++) {
      if (version > 1) {
        service.setManifest(versioned(version));
        // an unknown name refreshes the catalog at once (contract §8)
        expect((await callTool(gateway.mcpUrl, 'ver.refresh')).error.code).toBe(-32001);
      }
      for (let i = 0; i < 80; i++) {
        const call = await callTool(gateway.mcpUrl, `ver.v${version}.tool${i}`, {});
        expect(call.result.isError).toBeUndefined();
      }
    }
    const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    const toolLabels = new Set([...scrape.matchAll(/tool="([^"]+)"/g)].map((m) => m[1]));
    expect(toolLabels.size).toBe(80);
    for (const name of toolLabels) expect(name).toMatch(/^ver\.v10\.tool\d+$/);
    const toolSeries = scrape.split('\n').filter((l) => l.includes('tool="')).length;
    // per published tool: 1 call counter + 13 buckets, +Inf, sum and count of the histogram
    expect(toolSeries).toBe(80 * 17);
  });
});
