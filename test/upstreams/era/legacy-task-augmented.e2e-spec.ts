/**
 * A 2025-11-25 client's task-augmented `tools/call` (`params.task`, 2025-11-25 core tasks, SCH25
 * `TaskAugmentedRequestParams`) to a 2025 upstream tool listed with `execution.taskSupport:
 * "optional"` (the gateway lists the field to 2025 clients as the upstream published it,
 * docs/operations.md §11 "Tools for each revision").
 *
 * The gateway answers every 2025 `tasks/*` with -32601 (operations §10 "Tasks": 2025 tasks are not
 * bridged) and does not advertise `capabilities.tasks` at initialize. So a CreateTaskResult must
 * never reach a 2025 client: the call has to run synchronously ("a 2025 client's call runs
 * synchronously whatever the field says", operations §10 "Bundle tools as tasks"), the way the
 * gateway refuses to hand a client an upstream's own task id it cannot follow ("the upstream's own
 * id would reach the client with no tasks/get to follow it", operations §10 "An upstream's tasks").
 * Through the gateway, `params.task` reaches the upstream, the upstream's raw task id reaches the
 * client, and the client's `tasks/get` / `tasks/result` for it are -32601: the result is lost.
 */
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { rpc } from '../../support/rpc';

const TASK = {
  taskId: 'T1',
  status: 'working',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:00Z',
  ttl: 60000,
};

describe("era bridging: a 2025 client's task-augmented tools/call through the gateway", () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      era: '2025',
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      tools: [upTool('job', { execution: { taskSupport: 'optional' } })],
    });
    // a 2025-11-25 server: a task for a task-augmented call, else a plain result
    up.onTool('job', (req) =>
      req.params?.task !== undefined
        ? { result: { task: TASK } }
        : { result: { content: [{ type: 'text', text: 'sync result' }] } },
    );
    up.on('tasks/get', () => ({ result: { ...TASK, status: 'completed' } }));
    up.on('tasks/result', () => ({
      result: { content: [{ type: 'text', text: 'async result' }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('l', up.url, { protocol: '2025-11-25' })] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the client never holds a task it cannot follow: a synchronous result, or a task whose tasks/result works', async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    expect(init.json.result.capabilities.tasks).toBeUndefined();
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const listed = await rpc(gateway.mcpUrl, 'tools/list', {}, session);
    expect(listed.json.result.tools[0].execution).toEqual({ taskSupport: 'optional' });

    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'l__job', arguments: {}, task: { ttl: 60000 } },
      session,
    );
    const task = call.json.result?.task;
    if (task === undefined) {
      expect(call.json.result.content[0].text).toBe('sync result');
      return;
    }
    // handed a task: it must be readable through the gateway
    const result = await rpc(gateway.mcpUrl, 'tasks/result', { taskId: task.taskId }, session);
    expect(result.json.error).toBeUndefined();
    expect(result.json.result.content[0].text).toBe('async result');
  });
});
