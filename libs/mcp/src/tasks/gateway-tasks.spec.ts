import type { GatewayConfig } from '@app/config';
import type { ToolExecutor } from '@app/execution';
import type { BundleTool } from '@app/registry';
import type { MethodContext } from '../methods/method-handler';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { GatewayTasks } from './gateway-tasks';
import { TaskIds } from './task-ids';
import { MemoryTaskStore, type TaskRecord } from './task-store';

const config = {
  sessionKeys: [{ kid: 'a', key: Buffer.alloc(32, 3) }],
  mcp: {
    identity: 'gw',
    tasks: { ttlSeconds: 60, pollIntervalMillis: 500, leaseSeconds: 3, maxResultBytes: 2048 },
  },
} as unknown as GatewayConfig;
const tool = { name: 'jobs.report', sourceId: 'jobs' } as BundleTool;
const context = { protocolVersion: '2026-07-28', headers: {}, rawBody: '' } as MethodContext;

/** A memory store whose first `failures` writes of an ended task throw (Redis away). */
class FlakyStore extends MemoryTaskStore {
  constructor(private failures: number) {
    super(100, 100, 1 << 20);
  }

  override update(record: TaskRecord): Promise<boolean> {
    if (record.status !== 'working' && this.failures > 0) {
      this.failures -= 1;
      return Promise.reject(new Error('store unreachable'));
    }
    return super.update(record);
  }
}

function tasksWith(store: MemoryTaskStore, result: object): { tasks: GatewayTasks; ids: TaskIds } {
  const ids = new TaskIds(new MrtrSeal(config));
  const executor = { call: () => Promise.resolve(result) } as unknown as ToolExecutor;
  return { tasks: new GatewayTasks(store, executor, ids, config), ids };
}

async function settled(tasks: GatewayTasks, ids: TaskIds, clientId: string): Promise<any> {
  const taskId = ids.open(clientId, undefined)!.taskId;
  for (let i = 0; i < 100; i++) {
    const task = (await tasks.get(taskId, clientId, undefined)) as { status: string };
    if (task.status !== 'working') return task;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('not settled');
}

describe('GatewayTasks (docs/operations.md §10 "Tasks")', () => {
  it("keeps trying to record a call's outcome while the store is away, so a short outage loses nothing", async () => {
    const { tasks, ids } = tasksWith(new FlakyStore(2), {
      content: [{ type: 'text', text: 'ok' }],
    });
    const created = (await tasks.start(tool, '{}', context)) as { taskId: string };
    const task = await settled(tasks, ids, created.taskId);
    expect(task).toMatchObject({ status: 'completed', result: { content: [{ text: 'ok' }] } });
  });

  it('a result over maxResultBytes ends the task failed, saying so', async () => {
    const big = { content: [{ type: 'text', text: 'x'.repeat(4096) }] };
    const { tasks, ids } = tasksWith(new MemoryTaskStore(100, 100, 1 << 20), big);
    const created = (await tasks.start(tool, '{}', context)) as { taskId: string };
    const task = await settled(tasks, ids, created.taskId);
    expect(task.status).toBe('failed');
    expect(task.error.message).toContain('over mcp.tasks.maxResultBytes (2048)');
    expect(task).not.toHaveProperty('result');
  });

  it('a record is read only by the caller it was created for (sub and client_id); one of an earlier build by nobody', async () => {
    const store = new MemoryTaskStore(100, 100, 1 << 20);
    const { tasks, ids } = tasksWith(store, { content: [] });
    const one = { subject: 'alice', clientId: 'app-one', scopes: [], claims: {}, token: 't' };
    const two = { ...one, clientId: 'app-two' };
    const created = (await tasks.start(tool, '{}', { ...context, caller: one })) as {
      taskId: string;
    };
    const taskId = ids.open(created.taskId, one)!.taskId;
    await expect(tasks.get(taskId, created.taskId, one)).resolves.toMatchObject({
      taskId: created.taskId,
    });
    for (const call of [
      tasks.get(taskId, created.taskId, two),
      tasks.cancel(taskId, two),
      tasks.update(taskId, two),
    ])
      await expect(call).rejects.toThrow('unknown taskId');
    // as an earlier build wrote it: its owner only
    const { caller: _caller, ...old } = (await store.get(taskId))!;
    await store.create({ ...old, taskId: 'legacy' });
    await expect(tasks.get('legacy', 'gwtk1.x', one)).rejects.toThrow('unknown taskId');
  });
});
