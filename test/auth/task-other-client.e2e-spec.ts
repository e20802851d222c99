import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { TestToolService } from '../support/tool-service';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };
const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/operations.md §10 "Tasks", "Task ids": the owner and the caller are sealed into the id
 * "as requestState" (which binds `sub` and `client_id` as two fields, docs/security.md "Who is
 * a caller"; relay ids the same: "the token's sub and client_id"); an id "handed to another
 * caller (another sub/client_id, even with the same grant)" is -32602 "unknown taskId". So
 * another OAuth client acting for the same user must neither read, cancel nor watch the task
 * one client created.
 */
describe('a task id handed to one OAuth client, used by another client of the same user', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let gateway: GatewayProcess;
  let appOne: string;
  let appTwo: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      clients: [
        { client_id: 'app-one', client_secret: 'secret-one-secret-one' },
        { client_id: 'app-two', client_secret: 'secret-two-secret-two' },
      ],
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    service = await TestToolService.start(
      manifest('w', [{ ...tool({ name: 'w.report' }), execution: { taskSupport: 'optional' } }]),
    );
    service.tools.set('w.report', () => ({ body: { payroll: 'alice-only' }, delayMs: 1500 }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('w', service, 'w.')]),
        auth: jwtAuthConfig(as, RESOURCE),
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
    appOne = (await as.mint({ subject: 'alice', clientId: 'app-one' })).access_token;
    appTwo = (await as.mint({ subject: 'alice', clientId: 'app-two' })).access_token;
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), service?.stop()]);
  });

  const modern = (token: string, method: string, params: Record<string, unknown>) =>
    modernRequest(gateway.mcpUrl, method, params, WITH_TASKS, token);

  it('tasks/get, a listen and tasks/cancel by the other client are as for an unknown id', async () => {
    const created = (await modern(appOne, 'tools/call', { name: 'w.report', arguments: {} })).json
      .result;
    expect(created).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(/^gwtk1\./),
    });
    // the creating client reads it
    expect(
      (await modern(appOne, 'tasks/get', { taskId: created.taskId })).json.result,
    ).toMatchObject({
      taskId: created.taskId,
    });
    const listen = await modernListen(
      gateway.mcpUrl,
      'L',
      { taskIds: [created.taskId] },
      WITH_TASKS,
      appTwo,
    );
    try {
      const ack = await listen.waitForMessage(() => true);
      const read = await modern(appTwo, 'tasks/get', { taskId: created.taskId });
      const cancel = await modern(appTwo, 'tasks/cancel', { taskId: created.taskId });
      expect({
        read: read.json.error?.code,
        cancel: cancel.json.error?.code,
        honoured: ack.params?.notifications?.taskIds ?? [],
      }).toEqual({ read: -32602, cancel: -32602, honoured: [] });
    } finally {
      listen.close();
    }
  });
});
