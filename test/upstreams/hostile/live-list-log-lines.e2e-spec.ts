import { stopAfterEach } from '../../support/cleanup';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/**
 * A `lists: live` upstream's list is fetched per request (docs/operations.md §11 "Live lists"),
 * so what the gateway logs about one fetch it logs per caller request: an upstream that fails
 * its tools/list, or answers entries the gateway leaves out, must not make every tools/list a
 * caller sends a line (or six) in the operator's log. Each kind is counted per upstream and
 * logged at once, then at most once a minute (docs/operations.md §4 "What outsiders can make the
 * gateway log"); the failures metric still counts every skip.
 */

const REQUESTS = 30;

const linesWith = (gateway: GatewayProcess, text: string): string[] =>
  gateway.output.split('\n').filter((l) => l.includes(text));

describe('attack: a live upstream that fails or answers bad entries, and a caller that lists again and again', () => {
  const track = stopAfterEach();

  it(`${REQUESTS} tools/list cost one skip line for the failing upstream and one fetch's left-out lines for the bad one`, async () => {
    const failing = track(await ScriptedUpstream.start({ tools: [upTool('a')] }));
    failing.on('tools/list', () => ({ error: { code: -32000, message: 'no list for you' } }));
    // a 2025 upstream sends no ttlMs: its live list is fetched again for every request
    const bad = track(
      await ScriptedUpstream.start({ tools: [upTool('b'), {}, {}, {}, {}, {}, {}, {}] }),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [
            upstream('failing', failing.url, { lists: 'live', namePrefix: 'f_' }),
            upstream('bad', bad.url, { lists: 'live', namePrefix: 'b_' }),
          ],
        }),
        waitReady: true,
      }),
    );

    for (let i = 0; i < REQUESTS; i++) {
      const listed = await rpc(gateway.mcpUrl, 'tools/list');
      expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['b_b']);
    }
    expect(bad.rpcs('tools/list').length).toBeGreaterThanOrEqual(REQUESTS);
    expect(failing.rpcs('tools/list').length).toBeGreaterThanOrEqual(REQUESTS);
    // every skip is counted where the operator looks for numbers
    const metrics = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    expect(metrics).toContain(
      `mcp_gateway_upstream_live_failures_total{upstream="failing",method="tools/list"} ${REQUESTS}`,
    );

    // the first of each at once, the rest of the minute counted into the next line
    await gateway.waitForOutput('Upstream failing: live tools/list skipped');
    expect(linesWith(gateway, 'Upstream failing: live tools/list skipped')).toHaveLength(1);
    await gateway.waitForOutput('Upstream bad: live 2 more tools entries left out');
    expect(linesWith(gateway, 'Upstream bad: live ')).toHaveLength(6);
  }, 60_000);
});
