import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };

/**
 * docs/operations.md §10 "Tasks", "Grants": a task's `tasks/*` and listens are answered
 * -32602 / dropped once the caller's grant (on a virtual server's path: the view) no longer
 * covers the tool that created it. The view of a tag-selected server is resolved per catalog.
 */
describe('a task listen on a virtual server path after its tool left the view', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const at = (id: string): string => gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);
  const report = (tag: string) => ({
    ...tool({ name: 'jobs.report', description: `report ${tag}`, meta: { tags: [tag] } }),
    execution: { taskSupport: 'optional' },
  });

  beforeAll(async () => {
    service = await TestToolService.start(manifest('jobs', [report('team')], 'r1'));
    service.tools.set('jobs.report', () => ({ body: { secret: 'ledger-42' }, delayMs: 4000 }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('jobs', service, 'jobs.')]),
        virtualServers: [{ id: 'team', tags: ['team'] }],
        tasks: { pollIntervalMillis: 250, ttlSeconds: 120 },
      },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('tasks/get there is -32602, and the listen there carries no more of the task (no result)', async () => {
    const created = (
      await modernRequest(
        at('team'),
        'tools/call',
        { name: 'jobs.report', arguments: {} },
        WITH_TASKS,
      )
    ).json.result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const stream = await modernListen(at('team'), 'L', { taskIds: [created.taskId] }, WITH_TASKS);
    try {
      const ack = await stream.waitForMessage(() => true);
      expect(ack.params.notifications).toEqual({ taskIds: [created.taskId] });
      // the tool is tagged out of the server's view while the task runs
      service.setManifest(manifest('jobs', [report('other')], 'r2'));
      await rpc(gateway.mcpUrl, 'tools/call', { name: 'jobs.nope', arguments: {} });
      await waitFor(async () => {
        const names = (await rpc(at('team'), 'tools/list', {})).json.result.tools as unknown[];
        return names.length === 0;
      }, 10_000);
      // on the path, the task is now unknown, as the docs say
      const read = await modernRequest(
        at('team'),
        'tasks/get',
        { taskId: created.taskId },
        WITH_TASKS,
      );
      expect(read.json.error?.code).toBe(-32602);
      // wait until the task ended (read on /mcp, where the tool is still granted)
      await waitFor(async () => {
        const t = (
          await modernRequest(gateway.mcpUrl, 'tasks/get', { taskId: created.taskId }, WITH_TASKS)
        ).json.result;
        return t?.status === 'completed';
      }, 15_000);
      await new Promise((r) => setTimeout(r, 1500));
      const told = stream.messages.filter(
        (m) => m.method === 'notifications/tasks' && m.params.status === 'completed',
      );
      expect(told).toEqual([]);
    } finally {
      stream.close();
    }
  });
});
