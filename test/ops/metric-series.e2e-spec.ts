import { ADMIN_TOKEN, admin, startGateway, waitForTool } from '../admin/admin-support';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';
import { TestToolService } from '../support/tool-service';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function scrapeLines(gateway: GatewayProcess, match: string): Promise<string[]> {
  const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
  return scrape.split('\n').filter((line) => line.includes(match));
}

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

  it('a call in flight when its tool leaves the catalog does not bring the series back', async () => {
    const service = track(
      await TestToolService.start(
        manifest('b', [tool({ name: 'b.old' }), tool({ name: 'b.keep' })]),
      ),
    );
    service.tools.set('b.old', () => ({
      delayMs: 2500,
      body: { content: [{ type: 'text', text: 'late' }] },
    }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('b', service, 'b.')]),
        waitReady: true,
      }),
    );
    const inflight = callTool(gateway.mcpUrl, 'b.old', {});
    await sleep(500);
    service.setManifest(manifest('b', [tool({ name: 'b.keep' })], 'r2'));
    // an unknown name refreshes the catalog at once (contract §8)
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'b.nothing', arguments: {} });
    await waitForTool(gateway, 'b.old', false);
    expect((await inflight).result.content[0].text).toContain('late');
    expect(await scrapeLines(gateway, 'tool="b.old"')).toEqual([]);
    // a tool still published is counted as before
    expect((await callTool(gateway.mcpUrl, 'b.keep', {})).result.isError).toBeUndefined();
    expect((await scrapeLines(gateway, 'tool="b.keep"')).length).toBeGreaterThan(0);
  });

  it('a call in flight when its upstream is deleted leaves no series; registered again, it is counted again', async () => {
    const slow = track(
      await ScriptedUpstream.start({ tools: [{ name: 'wait', inputSchema: { type: 'object' } }] }),
    );
    slow.onTool('wait', () => ({
      delayMs: 2500,
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
    // a configured upstream beside it: a gateway needs one source at boot
    const base = track(
      await ScriptedUpstream.start({ tools: [{ name: 'b', inputSchema: { type: 'object' } }] }),
    );
    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], { upstreams: [{ id: 'base', url: base.url }] }),
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
        waitReady: false,
      },
      track,
    );
    const registration = { id: 'slow', url: slow.url };
    expect((await admin(gateway, 'POST', '/admin/upstreams', registration)).status).toBe(202);
    await waitForTool(gateway, 'slow__wait');
    const inflight = callTool(gateway.mcpUrl, 'slow__wait', {});
    await sleep(500);
    expect((await admin(gateway, 'DELETE', '/admin/upstreams/slow')).status).toBe(200);
    expect((await inflight).result.content[0].text).toBe('done');
    expect(await scrapeLines(gateway, 'upstream="slow"')).toEqual([]);
    expect((await admin(gateway, 'POST', '/admin/upstreams', registration)).status).toBe(202);
    await waitForTool(gateway, 'slow__wait');
    slow.onTool('wait', () => ({ result: { content: [{ type: 'text', text: 'now' }] } }));
    expect((await callTool(gateway.mcpUrl, 'slow__wait', {})).result.content[0].text).toBe('now');
    expect(
      (await scrapeLines(gateway, 'mcp_gateway_upstream_calls_total{')).some((l) =>
        l.includes('upstream="slow"'),
      ),
    ).toBe(true);
  });
});
