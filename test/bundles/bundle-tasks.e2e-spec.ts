import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { type RawAnswer } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };
const STOPPED =
  'The gateway replica running this task stopped, or could not record its outcome, before the call ended; the call may have run: check before calling the tool again';

/** A 2026-07-28 request (test/support/modern-rpc.ts), no credential. */
function modern(
  gateway: GatewayProcess,
  method: string,
  params: Record<string, unknown>,
  caps: object = WITH_TASKS,
): Promise<RawAnswer> {
  return modernRequest(gateway.mcpUrl, method, params, caps);
}

async function task(gateway: GatewayProcess, taskId: string): Promise<any> {
  return (await modern(gateway, 'tasks/get', { taskId })).json.result;
}

async function settled(gateway: GatewayProcess, taskId: string, timeoutMs = 10_000): Promise<any> {
  let last: any;
  await waitFor(
    async () => {
      last = await task(gateway, taskId);
      return ['completed', 'failed', 'cancelled'].includes(last.status);
    },
    timeoutMs,
    () => `task did not settle: ${JSON.stringify(last)}`,
  );
  return last;
}

const jobs = manifest('jobs', [
  { ...tool({ name: 'jobs.report' }), execution: { taskSupport: 'optional' } },
  { ...tool({ name: 'jobs.export' }), execution: { taskSupport: 'required' } },
  { ...tool({ name: 'jobs.stuck' }), execution: { taskSupport: 'optional' } },
  tool({ name: 'jobs.quick' }),
]);

/**
 * Bundle tools as tasks (docs/operations.md §10 "Tasks"): a Tool Service tool whose manifest says
 * `execution.taskSupport: optional|required` runs as a task for a 2026-07-28 request that declares
 * the extension; with Redis its status and result are read on any replica, and a task whose
 * replica stops before the call ends is reported failed with that reason.
 */
describe('bundle tools run as tasks by the gateway, kept in Redis', () => {
  const keyPrefix = uniqueKeyPrefix();
  let service: TestToolService;
  let first: GatewayProcess;
  let second: GatewayProcess;

  const start = () =>
    GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('jobs', service, 'jobs.')], {
          redis: { keyPrefix },
          shutdown: { gracePeriodSeconds: 1 },
        }),
        tasks: { leaseSeconds: 3, pollIntervalMillis: 250, ttlSeconds: 120 },
      },
      env: { REDIS_URL: SHARED_REDIS_URL, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });

  beforeAll(async () => {
    service = await TestToolService.start(jobs);
    service.tools.set('jobs.report', () => ({ body: { rows: 3 }, delayMs: 800 }));
    service.tools.set('jobs.export', () => ({ body: { file: 'x.csv' }, delayMs: 300 }));
    service.tools.set('jobs.stuck', () => ({ hang: true }));
    [first, second] = await Promise.all([start(), start()]);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await service?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it('server/discover declares the extension (the gateway runs tasks itself); a 2025 initialize does not', async () => {
    const discovered = (await modern(first, 'server/discover', {})).json.result;
    expect(discovered.capabilities.extensions).toEqual({ [TASKS]: {} });
    const legacy = await connectV1(first.mcpUrl);
    try {
      expect(legacy.getServerCapabilities()).not.toHaveProperty('extensions');
      // the 2025 Tool field stays in a 2025 list, and a required tool still runs for it (the SDK
      // itself would not call it without a 2025 task: asked by a plain request)
      const listed = (await legacy.listTools()).tools.find((t) => t.name === 'jobs.export');
      expect(listed?.execution).toEqual({ taskSupport: 'required' });
      const result = await legacy.request(
        { method: 'tools/call', params: { name: 'jobs.export', arguments: {} } },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([expect.objectContaining({ text: '{"file":"x.csv"}' })]);
    } finally {
      await legacy.close();
    }
  });

  it('answers with the task at once; the call goes on, and another replica reads its result from Redis', async () => {
    const before = service.requests.filter((r) => r.path.endsWith('/jobs.report')).length;
    const created = (await modern(first, 'tools/call', { name: 'jobs.report', arguments: {} })).json
      .result;
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 120_000,
      pollIntervalMs: 250,
      taskId: expect.stringMatching(/^gwtk1\./),
    });
    expect(created).not.toHaveProperty('result');
    // the Tool Service is still working on it (it answers after 800 ms)
    expect((await task(second, created.taskId)).status).toBe('working');
    const done = await settled(second, created.taskId);
    expect(done).toMatchObject({
      taskId: created.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: '{"rows":3}' }], resultType: 'complete' },
    });
    expect(service.requests.filter((r) => r.path.endsWith('/jobs.report')).length).toBe(before + 1);
  });

  it('a listen on another replica naming the task gets its notifications/tasks up to the result', async () => {
    const created = (await modern(first, 'tools/call', { name: 'jobs.report', arguments: {} })).json
      .result;
    const stream = await modernListen(second.mcpUrl, 7, { taskIds: [created.taskId] }, WITH_TASKS);
    try {
      expect((await stream.waitForMessage(() => true)).params.notifications).toEqual({
        taskIds: [created.taskId],
      });
      const done = await stream.waitForMessage(
        (m) => m.method === 'notifications/tasks' && m.params.status === 'completed',
      );
      expect(done.params).toMatchObject({
        taskId: created.taskId,
        result: { content: [{ type: 'text', text: '{"rows":3}' }] },
      });
      expect(stream.messages[1]).toMatchObject({
        method: 'notifications/tasks',
        params: { status: 'working' },
      });
    } finally {
      stream.close();
    }
  });

  it('without the extension: an optional tool answers synchronously, a required one -32021; other tools never become tasks', async () => {
    const sync = (await modern(first, 'tools/call', { name: 'jobs.report', arguments: {} }, {}))
      .json.result;
    expect(sync).toMatchObject({ resultType: 'complete', content: [{ text: '{"rows":3}' }] });
    const required = await modern(first, 'tools/call', { name: 'jobs.export', arguments: {} }, {});
    expect(required.status).toBe(400);
    expect(required.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const quick = (await modern(first, 'tools/call', { name: 'jobs.quick', arguments: {} })).json
      .result;
    expect(quick).toMatchObject({ resultType: 'complete' });
    expect(quick).not.toHaveProperty('taskId');
  });

  it('tasks/cancel from another replica cancels it; the running replica cuts its call at its next renewal', async () => {
    const created = (await modern(first, 'tools/call', { name: 'jobs.stuck', arguments: {} })).json
      .result;
    const ack = (await modern(second, 'tasks/cancel', { taskId: created.taskId })).json.result;
    expect(ack).toMatchObject({ resultType: 'complete' });
    expect(ack).not.toHaveProperty('status');
    expect((await task(first, created.taskId)).status).toBe('cancelled');
    // cancelling again is the same ack; the status stays
    expect((await modern(first, 'tasks/cancel', { taskId: created.taskId })).json.result).toEqual(
      ack,
    );
    expect((await task(second, created.taskId)).status).toBe('cancelled');
  });

  it('a task whose replica is killed mid-call is reported failed once its lease passes', async () => {
    const doomed = await start();
    try {
      const created = (await modern(doomed, 'tools/call', { name: 'jobs.stuck', arguments: {} }))
        .json.result;
      expect(created.status).toBe('working');
      doomed.child.kill('SIGKILL');
      const ended = await settled(second, created.taskId, 15_000);
      expect(ended).toMatchObject({
        status: 'failed',
        error: { code: -32603, message: STOPPED },
      });
      expect(ended).not.toHaveProperty('result');
    } finally {
      await doomed.stop();
    }
  });

  it('a task still running when its replica shuts down gets the grace period, then ends failed with the reason', async () => {
    const leaving = await start();
    const created = (await modern(leaving, 'tools/call', { name: 'jobs.stuck', arguments: {} }))
      .json.result;
    await leaving.stop();
    expect(await task(second, created.taskId)).toMatchObject({
      status: 'failed',
      error: { message: STOPPED },
    });
  });
});

describe('bundle tools as tasks without Redis: one replica, at most mcp.tasks.maxTasks', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(jobs);
    service.tools.set('jobs.stuck', () => ({ hang: true }));
    service.tools.set('jobs.report', () => ({ body: { rows: 1 } }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('jobs', service, 'jobs.')]),
        tasks: { maxTasks: 1 },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('a full store runs an optional tool synchronously and refuses a required one (-32603)', async () => {
    const held = (await modern(gateway, 'tools/call', { name: 'jobs.stuck', arguments: {} })).json
      .result;
    expect(held.status).toBe('working');
    const sync = (await modern(gateway, 'tools/call', { name: 'jobs.report', arguments: {} })).json
      .result;
    expect(sync).toMatchObject({ resultType: 'complete', content: [{ text: '{"rows":1}' }] });
    const refused = (await modern(gateway, 'tools/call', { name: 'jobs.export', arguments: {} }))
      .json;
    expect(refused.error).toMatchObject({ code: -32603 });
    expect(refused.error.message).toContain('runs only as a task');
    // once the held task ended (cancelled), it makes room for the next
    await modern(gateway, 'tasks/cancel', { taskId: held.taskId });
    const next = (await modern(gateway, 'tools/call', { name: 'jobs.report', arguments: {} })).json
      .result;
    expect(next.resultType).toBe('task');
    expect((await settled(gateway, next.taskId)).status).toBe('completed');
  });
});
