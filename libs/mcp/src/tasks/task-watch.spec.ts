import type { RegistryService } from '@app/registry';
import type { GatewayTasks } from './gateway-tasks';
import type { TaskIds } from './task-ids';
import { TaskWatch, type TaskWatcher } from './task-watch';
import type { UpstreamTasks } from './upstream-tasks';

/** A TaskWatch over gateway-run tasks that stay `working`; counts the reads of each task. */
function setup() {
  const reads: string[] = [];
  const ids = {
    open: (clientId: string) => ({ owner: { kind: 'gateway' }, taskId: `own-${clientId}` }),
  } as unknown as TaskIds;
  const gatewayTasks = {
    get: (taskId: string) => {
      reads.push(taskId);
      return Promise.resolve({ taskId, status: 'working', pollIntervalMs: 1000 });
    },
  } as unknown as GatewayTasks;
  const watch = new TaskWatch(ids, gatewayTasks, {} as UpstreamTasks, {} as RegistryService);
  const watcher = (signal: AbortSignal): TaskWatcher => ({
    caller: undefined,
    access: undefined,
    headers: {},
    signal,
    push: () => undefined,
  });
  return { watch, watcher, reads };
}

describe('TaskWatch', () => {
  it('a listen whose signal aborted before it was watched watches nothing: no read, no slot held', async () => {
    const { watch, watcher, reads } = setup();
    const gone = new AbortController();
    gone.abort();
    const ids = Array.from({ length: 64 }, (_, i) => `gwtk1.t${i}`);
    watch.watch(ids, watcher(gone.signal));
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual([]);
    // the caller's 64 slots are all still free
    expect(watch.honor([...ids, 'gwtk1.one-more'], undefined, undefined)).toHaveLength(64);
  });

  it('a listen watched while open is read, and stops being read when it ends', async () => {
    const { watch, watcher, reads } = setup();
    const open = new AbortController();
    watch.watch(['gwtk1.a'], watcher(open.signal));
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual(['own-gwtk1.a']);
    expect(watch.honor(['gwtk1.b'], undefined, undefined)).toEqual(['gwtk1.b']);
    open.abort();
    // its slot is free again: 64 others fit
    const others = Array.from({ length: 64 }, (_, i) => `gwtk1.o${i}`);
    expect(watch.honor(others, undefined, undefined)).toHaveLength(64);
  });
});
