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
 * A Redis that hangs (SIGSTOP: data kept) for 1.5 leases while a gateway task runs on a live
 * replica. docs/operations.md §10 "Tasks": "A call's outcome that cannot be written (the store
 * away) is tried again every second for two leases, the lease renewed meanwhile, so a shorter
 * outage loses nothing"; only "a replica that dies without a shutdown" has its task failed once
 * its lease passes.
 *
 * The first tasks/get after Redis answers again sees `leaseUntil` in the past: the running
 * replica renews it, another gives the runner two more leases before it counts it stopped, so the
 * task runs on and its outcome is recorded.
 */
describe('a task outlives a Redis hang shorter than two leases', () => {
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
    service.tools.set('jobs.report', () => ({ body: { rows: 3 }, delayMs: 12_000 }));
    [first, second] = await Promise.all([start(), start()]);
  }, 120_000);

  afterAll(async () => {
    own?.resume();
    await Promise.all([first?.stop(), second?.stop()]);
    await service?.stop();
    await own?.stop();
  });

  it('the task completes with its result', async () => {
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
    await new Promise((r) => setTimeout(r, 1000));

    own.pause();
    await new Promise((r) => setTimeout(r, 4500)); // 1.5 leases, less than two
    own.resume();

    // the client polls, as clients do, on both replicas
    const seen: string[] = [];
    let last: any;
    await waitFor(
      async () => {
        for (const g of [first, second]) {
          last = (await modernRequest(g.mcpUrl, 'tasks/get', { taskId }, WITH_TASKS)).json;
          const status = last?.result?.status ?? `error ${last?.error?.code}`;
          if (seen[seen.length - 1] !== status) seen.push(status);
          if (['completed', 'failed', 'cancelled'].includes(last?.result?.status)) return true;
        }
        await new Promise((r) => setTimeout(r, 100));
        return false;
      },
      30_000,
      () => `task never settled: ${JSON.stringify(last)}`,
    );
    // not failed as if its replica had stopped: it ran on, and its outcome is recorded
    expect(last.result.error).toBeUndefined();
    expect({ seen, result: last.result }).toMatchObject({
      result: { status: 'completed', result: { content: [{ type: 'text', text: '{"rows":3}' }] } },
    });
  }, 60_000);
});
