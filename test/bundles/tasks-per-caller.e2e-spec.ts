import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { modernRequest } from '../support/modern-rpc';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/**
 * Tasks kept in one replica's memory are shared out per caller (docs/operations.md §10
 * "Tasks"): past `tasks.maxStoredBytes` the caller whose results hold the most loses its own
 * oldest, and one caller holds at most a quarter of `tasks.maxTasks`. Before, caller B's large
 * results pushed out caller A's finished, unread result ("unknown taskId"), and B's running tasks
 * filled the replica so that A's task-only tool was refused.
 */
describe("one caller's tasks never push out or lock out another's (memory store)", () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let gateway: GatewayProcess;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    const tasked = (name: string, taskSupport: string, meta?: Record<string, unknown>) => ({
      ...tool({ name, ...(meta && { meta }) }),
      execution: { taskSupport },
    });
    service = await TestToolService.start(
      manifest('w', [
        tasked('w.small', 'optional'),
        tasked('w.req', 'required'),
        tasked('w.big', 'optional'),
        tasked('w.hold', 'required', { timeoutMillis: 30_000 }),
      ]),
    );
    service.tools.set('w.small', () => ({ body: { ok: 'alice-result' } }));
    service.tools.set('w.req', () => ({ body: { ok: 'alice-required' } }));
    service.tools.set('w.big', () => ({ body: { pad: 'x'.repeat(250_000) } }));
    service.tools.set('w.hold', () => ({ hang: true }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('w', service, 'w.')], {
          discovery: { maxToolTimeoutMillis: 30_000 },
          // B's held tasks never end: the stop at the end does not wait them out
          shutdown: { gracePeriodSeconds: 1 },
        }),
        tasks: { maxStoredBytes: 1_048_576, maxTasks: 20, maxTasksPerCaller: 100 },
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, tools: ['w.small', 'w.req'] },
            { match: { claim: 'groups', value: 'ops' }, tools: ['w.big', 'w.hold'] },
          ],
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
    alice = (await as.mint({ subject: 'alice', claims: { groups: ['dev'] } })).access_token;
    bob = (await as.mint({ subject: 'bob', claims: { groups: ['ops'] } })).access_token;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), service?.stop()]);
  });

  const modern = (token: string, method: string, params: Record<string, unknown>) =>
    modernRequest(gateway.mcpUrl, method, params, WITH_TASKS, token);

  async function created(token: string, name: string): Promise<string> {
    const answer = await modern(token, 'tools/call', { name, arguments: {} });
    expect(answer.json.result).toMatchObject({ resultType: 'task' });
    return answer.json.result.taskId as string;
  }

  async function settled(token: string, taskId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 200; i += 1) {
      const task = (await modern(token, 'tasks/get', { taskId })).json.result;
      if (['completed', 'failed', 'cancelled'].includes(task?.status)) return task;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`task ${taskId} did not end`);
  }

  it("B's large results push out its own oldest, never A's finished, unread one", async () => {
    const mine = await created(alice, 'w.small');
    expect(await settled(alice, mine)).toMatchObject({ status: 'completed' });
    const bobs: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const id = await created(bob, 'w.big');
      expect(await settled(bob, id)).toMatchObject({ status: 'completed' });
      bobs.push(id);
    }
    expect((await modern(alice, 'tasks/get', { taskId: mine })).json.result).toMatchObject({
      status: 'completed',
    });
    // 5 × 250 kB passed the 1 MiB: B's first went
    expect((await modern(bob, 'tasks/get', { taskId: bobs[0] })).json.error).toMatchObject({
      code: -32602,
    });
  }, 60_000);

  it("B's running tasks take at most a quarter of maxTasks: A's task-only tool still runs as a task", async () => {
    for (let i = 0; i < 5; i += 1) await created(bob, 'w.hold');
    const past = await modern(bob, 'tools/call', { name: 'w.hold', arguments: {} });
    expect(past.json.error).toMatchObject({ code: -32603 });
    const mine = await created(alice, 'w.req');
    expect(await settled(alice, mine)).toMatchObject({ status: 'completed' });
  }, 60_000);
});
