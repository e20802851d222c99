import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { OwnRedis, uniqueKeyPrefix } from '../support/redis';
import { modernRequest } from '../support/modern-rpc';
import { TestToolService } from '../support/tool-service';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };

const jobs = manifest('jobs', [
  {
    ...tool({ name: 'jobs.report', meta: { timeoutMillis: 20_000 } }),
    execution: { taskSupport: 'optional' },
  },
]);

/**
 * A gateway task running on replica `first` when Redis restarts without its data
 * (docs/operations.md §10 "Tasks": "a shorter outage loses nothing"; §5/§15/§16 and §11 treat
 * "Redis came back empty" by writing back what a replica still holds).
 *
 * The running replica still holds the task (it runs its call, and knows its record): at its next
 * lease renewal it finds the record gone and writes it back (a missing record is not taken for a
 * cancellation), and the outcome is read on the other replica.
 */
describe('a running task survives Redis restarting without its data', () => {
  const keyPrefix = uniqueKeyPrefix();
  let own: OwnRedis;
  let service: TestToolService;
  let first: GatewayProcess;
  let second: GatewayProcess;

  const start = () =>
    GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('jobs', service, 'jobs.')], {
          redis: { keyPrefix, commandTimeoutMillis: 300 },
          discovery: { maxToolTimeoutMillis: 30_000 },
          shutdown: { gracePeriodSeconds: 1 },
        }),
        tasks: { leaseSeconds: 3, pollIntervalMillis: 250, ttlSeconds: 120 },
      },
      env: { REDIS_URL: own.url, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });

  beforeAll(async () => {
    own = await OwnRedis.start();
    service = await TestToolService.start(jobs);
    service.tools.set('jobs.report', () => ({ body: { rows: 3 }, delayMs: 8000 }));
    [first, second] = await Promise.all([start(), start()]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await service?.stop();
    await own?.stop();
  });

  it('the task created before the restart is still read, and completes, on the other replica', async () => {
    const created = (
      await modernRequest(
        first.mcpUrl,
        'tools/call',
        { name: 'jobs.report', arguments: {} },
        WITH_TASKS,
      )
    ).json.result;
    expect(created.status).toBe('working');
    const taskId = created.taskId as string;

    // not "just before": the task has been kept, and its lease renewed, for a while
    await new Promise((r) => setTimeout(r, 2000));
    expect(
      (await modernRequest(second.mcpUrl, 'tasks/get', { taskId }, WITH_TASKS)).json.result.status,
    ).toBe('working');
    await own.stop();
    await own.restart(); // back at once, without its data (no persistence)

    // the running replica may take a moment (its reconnect, its next renewal) to put the task back
    let last: any;
    await waitFor(
      async () => {
        last = (await modernRequest(second.mcpUrl, 'tasks/get', { taskId }, WITH_TASKS)).json;
        return last?.result?.status === 'completed' || last?.result?.status === 'cancelled';
      },
      20_000,
      () => `task never completed; last tasks/get on the other replica: ${JSON.stringify(last)}`,
    );
    expect(last.result).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: '{"rows":3}' }] },
    });
  }, 60_000);
});
