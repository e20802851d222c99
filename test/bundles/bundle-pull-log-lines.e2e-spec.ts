import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';
import { stopAfterEach } from '../support/cleanup';

const CALLS = 15;

/**
 * A caller's unknown tool name is a refresh round (contract §8), and every round pulls every
 * bundle: a Tool Service whose manifest is rejected or whose pull fails would then write its
 * lines (the rejection lists every problem) as often as a caller names unknown tools. Counted
 * per bundle and kind of failure instead, the first at once, then at most once a minute
 * (docs/operations.md §4 "What outsiders can make the gateway log").
 */
describe('attack: a caller naming unknown tools while a bundle is broken', () => {
  const track = stopAfterEach();

  it(`${CALLS} refresh rounds cost one rejection line and one pull-failure line`, async () => {
    const rejected = track(
      await TestToolService.start(
        manifest('r', [tool({ name: 'r.ok' }), tool({ name: 'bad name' })]),
      ),
    );
    const failing = track(await TestToolService.start(manifest('f', [tool({ name: 'f.ok' })])));
    failing.manifest = () => ({ status: 500, body: 'down' });
    const good = track(await TestToolService.start(manifest('g', [tool({ name: 'g.ok' })])));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle('r', rejected, 'r.'),
          bundle('f', failing, 'f.'),
          bundle('g', good, 'g.'),
        ]),
      }),
    );
    await gateway.waitForOutput(/Bundle r revision .*: remote manifest rejected/);
    await gateway.waitForOutput('Bundle f: manifest pull failed');
    const manifestsBefore = rejected.requests.filter((r) => r.path.includes('manifest')).length;
    for (let i = 0; i < CALLS; i++) await callTool(gateway.mcpUrl, `g.unknown${i}`);
    expect(
      rejected.requests.filter((r) => r.path.includes('manifest')).length - manifestsBefore,
    ).toBeGreaterThanOrEqual(CALLS);
    await new Promise((r) => setTimeout(r, 500));
    const lines = gateway.output.split('\n');
    expect(lines.filter((l) => l.includes('remote manifest rejected'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('Bundle f: manifest pull failed'))).toHaveLength(1);
  }, 60_000);
});
