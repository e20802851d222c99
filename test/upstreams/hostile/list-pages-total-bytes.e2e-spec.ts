import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * An upstream's list is one answer across its pages (docs/operations.md §10 "Lists"): its pages
 * together are bounded by `mcp.execution.maxResponseBytes` (8 MiB), as one answer is, and a pull
 * past it fails (UpstreamTooLargeError) and publishes nothing of it — not 30 pages of one
 * 1.5 MB tool each, which every client's tools/list would then carry (45 MB).
 */
describe('an upstream whose list pages each carry one huge tool', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;
  const DESCRIPTION = 'd'.repeat(1_500_000);
  const COUNT = 30;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: Array.from({ length: COUNT }, (_, i) => ({
        name: `t${i}`,
        description: DESCRIPTION,
        inputSchema: { type: 'object' },
      })),
      pageSize: 1,
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        // generous, so that a loaded machine reaches the byte bound before the time bound
        upstreams: [upstream('hostile', up.url, { timeouts: { listMillis: 20_000 } })],
      }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the pull stops past 8 MiB of pages together, names why, and publishes none of it', async () => {
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    const names = (list.json.result.tools as { name: string }[]).map((t) => t.name);
    expect(names.filter((n) => n.startsWith('hostile__'))).toEqual([]);
    expect(list.text.length).toBeLessThan(1_000_000);
    // no page was asked for past the bound: 6 pages hold 9 MB
    expect(up.rpcs('tools/list').length).toBeLessThanOrEqual(6);
    const status = await fetch(`${gateway.managementUrl}/actuator/upstreams`).then((r) => r.text());
    expect(status).toContain('UpstreamTooLargeError');
  });
});
