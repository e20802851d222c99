import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { modernRequest } from '../support/modern-rpc';
import { TestToolService } from '../support/tool-service';
import { stopAfterEach } from '../support/cleanup';

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const CALLS = 30;

/**
 * A caller past its share of tasks (docs/operations.md §10 "Tasks") has every further
 * task-augmented call refused; each refusal is the caller's doing, so a line each would let it
 * write to the operator's log as fast as it calls. The refusals are counted and logged at once,
 * then at most once a minute (docs/operations.md §4 "What outsiders can make the gateway log").
 */
describe('attack: a caller past its share of tasks calling again and again', () => {
  const track = stopAfterEach();

  it(`${CALLS} refused task-augmented calls cost one log line`, async () => {
    const service = track(
      await TestToolService.start(
        manifest('w', [
          {
            ...tool({ name: 'w.hold', meta: { timeoutMillis: 30_000 } }),
            execution: { taskSupport: 'required' },
          },
        ]),
      ),
    );
    service.tools.set('w.hold', () => ({ hang: true }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('w', service, 'w.')], {
            discovery: { maxToolTimeoutMillis: 30_000 },
            shutdown: { gracePeriodSeconds: 1 },
          }),
          tasks: { maxTasks: 4 },
        },
        waitReady: true,
      }),
    );
    const call = () =>
      modernRequest(gateway.mcpUrl, 'tools/call', { name: 'w.hold', arguments: {} }, WITH_TASKS);
    // the first few are kept (a quarter of maxTasks), every later one is refused
    let refused = 0;
    for (let i = 0; i < 100 && refused < CALLS; i++)
      if ((await call()).json.error?.code === -32603) refused++;
    expect(refused).toBe(CALLS);
    await gateway.waitForOutput('Tool w.hold: no task could be kept now');
    expect(
      gateway.output.split('\n').filter((l) => l.includes('no task could be kept now')),
    ).toHaveLength(1);
  }, 60_000);
});
