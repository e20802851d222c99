import { stopAfterEach } from '../../support/cleanup';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/**
 * An upstream decides how often it says its lists changed, and each burst is a refresh of it
 * (docs/operations.md §10); a caller's unknown tool name is a refresh round too. What a pull
 * logs (its list_changed burst, its left-out entries, its failure) would then be written as
 * often as the upstream or the caller likes: counted per upstream (and kind of failure), the
 * first at once, then at most once a minute (docs/operations.md §4 "What outsiders can make the
 * gateway log").
 */

const BURSTS = 15;

const linesWith = (gateway: GatewayProcess, text: string): string[] =>
  gateway.output.split('\n').filter((l) => l.includes(text));

describe('attack: an upstream that says its lists changed again and again', () => {
  const track = stopAfterEach();

  it(`${BURSTS} list_changed bursts with entries left out cost one burst line and one pull's left-out lines`, async () => {
    const noisy = track(
      await ScriptedUpstream.start({ tools: [upTool('n'), {}, {}, {}, {}, {}, {}, {}] }),
    );
    // every call's answer says the tools changed (MCP: a notification on the call's SSE answer)
    noisy.onTool('n', (req) => ({
      sse: true,
      events: [
        { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
        { jsonrpc: '2.0', id: req.id, result: { content: [] } },
      ],
    }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [upstream('noisy', noisy.url, { namePrefix: 'n_' })],
          registry: { listChangedRefreshMinIntervalMillis: 0 },
        }),
        waitReady: true,
      }),
    );
    await gateway.waitForOutput('Upstream noisy: 2 more tools entries left out');
    const pullsBefore = noisy.rpcs('tools/list').length;
    for (let i = 0; i < BURSTS; i++) {
      const pulls = noisy.rpcs('tools/list').length;
      await rpc(gateway.mcpUrl, 'tools/call', { name: 'n_n', arguments: {} });
      // the burst's pull is done before the next one starts: each is a burst of its own
      for (let w = 0; w < 200 && noisy.rpcs('tools/list').length === pulls; w++)
        await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(noisy.rpcs('tools/list').length - pullsBefore).toBeGreaterThanOrEqual(BURSTS);
    await new Promise((r) => setTimeout(r, 500));
    expect(linesWith(gateway, 'Upstream noisy: notifications/tools/list_changed')).toHaveLength(1);
    expect(linesWith(gateway, 'Upstream noisy: ')).toHaveLength(7);
  }, 60_000);
});
