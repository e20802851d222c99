import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { TasksUpstream } from '../support/tasks-upstream-process';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { postRaw, type RawAnswer } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };

/**
 * The Tasks extension (SEP-2663) through the gateway (docs/operations.md §10 "Tasks"): an
 * upstream's CreateTaskResult reaches the client with a task id the gateway sealed to the
 * upstream and the caller; tasks/get|update|cancel go back to that upstream with its own id, on
 * any replica; another caller, a caller without the grant, or a request that did not declare the
 * extension gets nothing of the task.
 */
describe('Tasks (SEP-2663) routed to the upstream that runs them', () => {
  let as: TestAuthorizationServer;
  let jobs: TasksUpstream;
  let claims: TestToolService;
  let gateway: GatewayProcess;
  let replica: GatewayProcess;
  let alice: string;
  let bob: string;
  let carol: string;
  /** alice again, with a grant that no longer covers the claims bundle */
  let aliceJobsOnly: string;
  /** dora, granted jobs__slow_compute alone; dora again, granted jobs__greet alone */
  let doraSlow: string;
  let doraGreet: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    jobs = await TasksUpstream.start();
    claims = await TestToolService.start(
      manifest('claims', [
        tool({ name: 'claims.open' }),
        { ...tool({ name: 'claims.report' }), execution: { taskSupport: 'optional' } },
      ]),
    );
    claims.tools.set('claims.report', () => ({ body: { pages: 2 } }));
    const mcp = {
      ...gatewayConfig([bundle('claims', claims, 'claims.')], {
        upstreams: [upstream('jobs', jobs.url, { namePrefix: 'jobs__' })],
      }),
      auth: {
        mode: 'jwt',
        issuer: as.issuer,
        audience: RESOURCE,
        jwksUrl: as.jwksUrl,
        algorithms: ['ES256'],
      },
      access: {
        rules: [
          { match: { claim: 'groups', value: 'dev' }, sources: ['jobs', 'claims'] },
          { match: { claim: 'groups', value: 'ops' }, sources: ['claims'] },
          { match: { claim: 'groups', value: 'jobs-only' }, sources: ['jobs'] },
          // single tools of the upstream, not the source (as a tool-pattern virtual server)
          { match: { claim: 'groups', value: 'slow-tool' }, tools: ['jobs__slow_compute'] },
          { match: { claim: 'groups', value: 'greet-tool' }, tools: ['jobs__greet'] },
        ],
      },
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS };
    [gateway, replica] = await Promise.all([
      GatewayProcess.start({ mcp, env, waitReady: true }),
      GatewayProcess.start({ mcp, env, waitReady: true }),
    ]);
    alice = (await as.mint({ subject: 'alice', claims: { groups: ['dev'] } })).access_token;
    bob = (await as.mint({ subject: 'bob', claims: { groups: ['dev'] } })).access_token;
    carol = (await as.mint({ subject: 'carol', claims: { groups: ['ops'] } })).access_token;
    aliceJobsOnly = (await as.mint({ subject: 'alice', claims: { groups: ['jobs-only'] } }))
      .access_token;
    doraSlow = (await as.mint({ subject: 'dora', claims: { groups: ['slow-tool'] } })).access_token;
    doraGreet = (await as.mint({ subject: 'dora', claims: { groups: ['greet-tool'] } }))
      .access_token;
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), replica?.stop()]);
    await Promise.all([as?.stop(), jobs?.stop(), claims?.stop()]);
  });

  /** A 2026-07-28 request of `token` (docs: test/support/modern-rpc.ts). */
  function modern(
    token: string,
    method: string,
    params: Record<string, unknown>,
    caps: object = WITH_TASKS,
    target: GatewayProcess = gateway,
  ): Promise<RawAnswer> {
    return modernRequest(target.mcpUrl, method, params, caps, token);
  }

  async function created(token: string, name: string, args: object = {}): Promise<string> {
    const answer = await modern(token, 'tools/call', { name, arguments: args });
    expect(answer.json.result).toMatchObject({ resultType: 'task', status: 'working' });
    return answer.json.result.taskId as string;
  }

  async function settled(token: string, taskId: string, until?: string): Promise<any> {
    for (let i = 0; i < 100; i++) {
      const task = (await modern(token, 'tasks/get', { taskId })).json.result;
      if (task.status === until || ['completed', 'failed', 'cancelled'].includes(task.status))
        return task;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`task ${taskId} did not settle`);
  }

  it("a caller granted the upstream's tool but not its source reads and cancels the task that tool created; a grant of another of its tools does not", async () => {
    const taskId = await created(doraSlow, 'jobs__slow_compute', { seconds: 5, label: 'd' });
    const got = await modern(doraSlow, 'tasks/get', { taskId });
    expect(got.json.result).toMatchObject({ taskId, status: 'working' });
    // the same caller whose grant now holds only another tool of the upstream: unknown
    const other = await modern(doraGreet, 'tasks/get', { taskId });
    expect(other.json.error).toMatchObject({ code: -32602 });
    const cancelled = await modern(doraSlow, 'tasks/cancel', { taskId });
    expect(cancelled.json.error).toBeUndefined();
    expect((await settled(doraSlow, taskId)).status).toBe('cancelled');
  });

  it('server/discover declares the extension to callers granted the upstream or a task-capable bundle tool only', async () => {
    const granted = (await modern(alice, 'server/discover', {})).json.result;
    expect(granted.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(granted.capabilities).not.toHaveProperty('tasks');
    // carol may use a bundle tool that runs as a task: the gateway's own tasks
    expect(
      (await modern(carol, 'server/discover', {})).json.result.capabilities.extensions,
    ).toEqual({ [TASKS]: {} });
    // a caller granted neither the upstream nor such a tool is offered no tasks
    const nobody = (await as.mint({ subject: 'dave', claims: { groups: ['none'] } })).access_token;
    const other = (await modern(nobody, 'server/discover', {})).json.result;
    expect(other.capabilities).not.toHaveProperty('extensions');
  });

  it('a CreateTaskResult carries a sealed id; tasks/get with it reaches the upstream with its own id and inlines the result', async () => {
    const taskId = await created(alice, 'jobs__slow_compute', { seconds: 0.3, label: 'a' });
    expect(taskId).toMatch(/^gwtk1\./);
    const task = await settled(alice, taskId);
    expect(task).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'completed',
      ttlMs: 60000,
      pollIntervalMs: 200,
      result: { content: [{ type: 'text', text: 'computed a after 300 ms' }] },
    });
    const seen = await jobs.received();
    const upstreamIds = seen.filter((r) => r.method === 'tasks/get').map((r) => r.taskId);
    // the upstream saw its own id (a UUID), never the client's
    expect(upstreamIds.length).toBeGreaterThan(0);
    for (const id of upstreamIds) expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('another replica with the same MCP_SESSION_KEYS opens the id (no state on the replica)', async () => {
    const taskId = await created(alice, 'jobs__slow_compute', { seconds: 0.2, label: 'r' });
    const there = await modern(alice, 'tasks/get', { taskId }, WITH_TASKS, replica);
    expect(there.json.result).toMatchObject({ taskId, status: expect.any(String) });
  });

  it('another caller, even with the same grant, cannot read, answer or cancel the task: -32602, as an unknown id, and the upstream never hears of it', async () => {
    const taskId = await created(alice, 'jobs__slow_compute', { seconds: 30, label: 'mine' });
    const before = (await jobs.received()).length;
    for (const token of [bob, carol])
      for (const [method, extra] of [
        ['tasks/get', {}],
        ['tasks/update', { inputResponses: {} }],
        ['tasks/cancel', {}],
      ] as const) {
        const answer = await modern(token, method, { taskId, ...extra });
        expect(answer.json.error).toMatchObject({
          code: -32602,
          message: 'Invalid params: unknown taskId',
        });
      }
    expect((await jobs.received()).length).toBe(before);
    expect((await modern(alice, 'tasks/get', { taskId })).json.result.status).toBe('working');
    expect((await modern(alice, 'tasks/cancel', { taskId })).json.result).toEqual(
      expect.objectContaining({ resultType: 'complete' }),
    );
    expect((await settled(alice, taskId)).status).toBe('cancelled');
  });

  it('ids not handed out here are unknown: the upstream own id, a tampered one, garbage', async () => {
    const taskId = await created(alice, 'jobs__slow_compute', { seconds: 0.1, label: 't' });
    const upstreamId = (await jobs.received()).filter((r) => r.method === 'tools/call').pop()!;
    expect(upstreamId.name).toBe('slow_compute');
    const own = (await jobs.received()).find((r) => r.method === 'tasks/get')?.taskId as string;
    const tampered = taskId.slice(0, -2) + (taskId.endsWith('A') ? 'BB' : 'AA');
    for (const id of [own, tampered, 'gwtk1.t1.AAAA', 'x'])
      expect((await modern(alice, 'tasks/get', { taskId: id })).json.error).toMatchObject({
        code: -32602,
      });
  });

  it('without the extension on the request: task tools run synchronously or answer -32021, and tasks/* are -32021', async () => {
    const sync = await modern(
      alice,
      'tools/call',
      {
        name: 'jobs__slow_compute',
        arguments: { seconds: 0, label: 's' },
      },
      {},
    );
    expect(sync.json.result).toMatchObject({ resultType: 'complete' });
    expect(sync.json.result).not.toHaveProperty('taskId');
    const required = await modern(
      alice,
      'tools/call',
      { name: 'jobs__failing_job', arguments: {} },
      {},
    );
    expect(required.status).toBe(400);
    expect(required.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const taskId = await created(alice, 'jobs__slow_compute', { seconds: 0.1, label: 'g' });
    const gated = await modern(alice, 'tasks/get', { taskId }, {});
    expect(gated.status).toBe(400);
    expect(gated.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
  });

  it('input: tasks/get shows the input requests, tasks/update answers them (ack only) and the task completes', async () => {
    const taskId = await created(alice, 'jobs__confirm_delete', { filename: 'a.txt' });
    const waiting = await settled(alice, taskId, 'input_required');
    expect(waiting).toMatchObject({
      status: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    const ack = await modern(alice, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.json.result).toEqual({
      resultType: 'complete',
      _meta: expect.any(Object),
    });
    const done = await settled(alice, taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content[0].text).toContain('"confirm"');
  });

  it('a tool error is a completed task with isError; a protocol error a failed one with its error', async () => {
    const failing = await settled(alice, await created(alice, 'jobs__failing_job'));
    expect(failing).toMatchObject({ status: 'completed', result: { isError: true } });
    const broken = await settled(alice, await created(alice, 'jobs__protocol_error_job'));
    expect(broken).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(broken).not.toHaveProperty('result');
  });

  /** A raw 2026 `subscriptions/listen` of `token` for these task ids. */
  function listen(token: string, taskIds: string[], caps: object = WITH_TASKS): Promise<SseReader> {
    return modernListen(gateway.mcpUrl, 'W', { taskIds }, caps, token);
  }

  it('a listen naming task ids gets notifications/tasks for those handed to its caller, up to the result', async () => {
    const mine = await created(alice, 'jobs__slow_compute', { seconds: 0.5, label: 'watched' });
    const theirs = await created(bob, 'jobs__slow_compute', { seconds: 30, label: 'bob' });
    const stream = await listen(alice, [mine, theirs, 'gwtk1.t1.AAAA']);
    try {
      const ack = await stream.waitForMessage(() => true);
      expect(ack.params.notifications).toEqual({ taskIds: [mine] });
      const done = await stream.waitForMessage(
        (m) => m.method === 'notifications/tasks' && m.params.status === 'completed',
      );
      expect(done.params).toMatchObject({
        taskId: mine,
        result: { content: [{ type: 'text', text: 'computed watched after 500 ms' }] },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'W' },
      });
      const statuses = stream.messages
        .filter((m) => m.method === 'notifications/tasks')
        .map((m) => [m.params.taskId, m.params.status]);
      expect(statuses[0]).toEqual([mine, 'working']);
      expect(statuses.every(([id]) => id === mine)).toBe(true);
    } finally {
      stream.close();
      await modern(bob, 'tasks/cancel', { taskId: theirs });
    }
    // only ids handed to the caller: another caller's listen honours nothing and is closed
    const other = await listen(bob, [mine]);
    try {
      const ack = await other.waitForMessage(() => true);
      expect(ack.params.notifications).toEqual({});
    } finally {
      other.close();
    }
    // and only for a listen that declares the extension
    const undeclared = await listen(alice, [mine], {});
    try {
      expect((await undeclared.waitForMessage(() => true)).params.notifications).toEqual({});
    } finally {
      undeclared.close();
    }
  });

  it("a bundle task follows the caller's grant: the same caller without the bundle in its grant gets -32602", async () => {
    const taskId = await created(alice, 'claims.report');
    expect((await settled(alice, taskId)).result.content[0].text).toBe('{"pages":2}');
    for (const method of ['tasks/get', 'tasks/cancel'])
      expect((await modern(aliceJobsOnly, method, { taskId })).json.error).toMatchObject({
        code: -32602,
      });
  });

  it('a capability the client cannot use a task with is not passed on: a 2025 session, or a malformed declaration, gets the call synchronously', async () => {
    // a 2025 client that put the 2026 extension in its initialize
    const init = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: WITH_TASKS,
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${alice}`,
      },
    );
    const session = init.headers.get('mcp-session-id')!;
    const call = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'jobs__slow_compute', arguments: { seconds: 0, label: 'l' } },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${alice}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      },
    );
    expect(call.json.result.content).toEqual([{ type: 'text', text: 'computed l after 0 ms' }]);
    // a 2026 request whose extension settings are not an object
    const malformed = await modern(
      alice,
      'tools/call',
      { name: 'jobs__slow_compute', arguments: { seconds: 0, label: 'm' } },
      { extensions: { [TASKS]: true } },
    );
    expect(malformed.json.result).toMatchObject({ resultType: 'complete' });
    const declared = (await jobs.received()).filter((r) => r.method === 'tools/call').slice(-2);
    expect(declared.map((r) => r.declared)).toEqual([false, false]);
  });

  it('tasks/list and tasks/result are not methods of the extension (-32601), and a 2025 client has no tasks/*', async () => {
    for (const method of ['tasks/list', 'tasks/result']) {
      const answer = await modern(alice, method, method === 'tasks/result' ? { taskId: 'x' } : {});
      expect(answer.json.error.code).toBe(-32601);
    }
    const legacy = await connectV1(gateway.mcpUrl, { authorization: `Bearer ${alice}` });
    try {
      await expect(
        legacy.request(
          { method: 'tasks/get', params: { taskId: 'x' } },
          (await import('@modelcontextprotocol/sdk/types.js')).ResultSchema,
        ),
      ).rejects.toMatchObject({ code: -32601 });
      // a 2025 client declares no 2026 extension: the task tool runs synchronously for it
      const result = await legacy.callTool({
        name: 'jobs__slow_compute',
        arguments: { seconds: 0, label: 'legacy' },
      });
      expect(result).not.toHaveProperty('taskId');
      expect(result.content).toEqual([{ type: 'text', text: 'computed legacy after 0 ms' }]);
      // a tool that runs only as a task: the 2025 client is told so in words
      const required = await legacy.callTool({ name: 'jobs__failing_job', arguments: {} });
      expect(required.isError).toBe(true);
      expect(JSON.stringify(required.content)).toContain('runs only as a task');
    } finally {
      await legacy.close();
    }
  });
});
