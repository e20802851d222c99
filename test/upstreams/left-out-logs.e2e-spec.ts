import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/**
 * An upstream that lists 100,000 invalid resources and 100,000 invalid prompts (`{}` each):
 * every one is left out, and the log names the first 5 of each list per pull (and per live
 * fetch), then one count line, never one line per entry (docs/operations.md "Upstream MCP
 * servers", Checks).
 */

const N = 100_000;
const empties = (): Record<string, unknown>[] => Array.from({ length: N }, () => ({}));

const leftOutLines = (gateway: GatewayProcess, live: boolean): string[] =>
  gateway.output
    .split('\n')
    .filter((l) => l.includes('left out') && l.includes(live ? ': live ' : 'Upstream '))
    .filter((l) => live || !l.includes(': live '));

describe('left-out list entries are logged a few per list, then counted', () => {
  const track = stopAfterEach();

  it('a pull of 100,000 invalid resources and 100,000 invalid prompts logs 5 of each and one count line per list; a live fetch of them does the same', async () => {
    const lists = { tools: [upTool('ok')], resources: empties(), prompts: empties() };
    const pulled = track(await ScriptedUpstream.start(lists));
    const live = track(await ScriptedUpstream.start(lists));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          // over the default list cap (10000): the entries must reach the checks
          discovery: { maxListItemsPerUpstream: N },
          upstreams: [
            upstream('pulled', pulled.url, { timeouts: { listMillis: 20_000 } }),
            upstream('live', live.url, { lists: 'live', timeouts: { listMillis: 20_000 } }),
          ],
        }),
        waitReady: true,
      }),
    );
    await gateway.waitForOutput(
      'Upstream pulled: 99995 more prompts entries left out (100000 in all; the first 5 are logged)',
      30_000,
    );
    await gateway.waitForOutput('Upstream pulled: 99995 more resources entries left out', 30_000);
    expect(leftOutLines(gateway, false).filter((l) => l.includes('Upstream pulled:'))).toHaveLength(
      12,
    );

    const listed = await rpc(gateway.mcpUrl, 'resources/list');
    expect(listed.json.result.resources).toEqual([]);
    await rpc(gateway.mcpUrl, 'prompts/list');
    await gateway.waitForOutput(
      'Upstream live: live 99995 more resources entries left out',
      30_000,
    );
    await gateway.waitForOutput('Upstream live: live 99995 more prompts entries left out', 30_000);
    expect(leftOutLines(gateway, true)).toHaveLength(12);
  });
});
