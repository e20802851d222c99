import type { RegistryService } from '@app/registry';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import type { GatewayTasks } from './gateway-tasks';
import type { TaskIds } from './task-ids';
import { MAX_INLINED_CHARS, TaskWatch, type TaskWatcher } from './task-watch';
import type { UpstreamTasks } from './upstream-tasks';

/** A TaskWatch over gateway-run tasks that stay `working`; counts the reads of each task. */
function setup(detail: Record<string, unknown> = {}) {
  const reads: string[] = [];
  const pushed: Record<string, unknown>[] = [];
  const ids = {
    open: (clientId: string) => ({ owner: { kind: 'gateway' }, taskId: `own-${clientId}` }),
  } as unknown as TaskIds;
  const gatewayTasks = {
    get: (taskId: string) => {
      reads.push(taskId);
      return Promise.resolve({ taskId, status: 'working', pollIntervalMs: 1000, ...detail });
    },
  } as unknown as GatewayTasks;
  const watch = new TaskWatch(ids, gatewayTasks, {} as UpstreamTasks, {} as RegistryService);
  const watcher = (signal: AbortSignal): TaskWatcher => ({
    caller: undefined,
    access: undefined,
    headers: {},
    signal,
    push: (params) => pushed.push(params),
  });
  return { watch, watcher, reads, pushed };
}

describe('TaskWatch', () => {
  it('a task whose details are huge is notified by its state alone, every notification within MAX_INLINED_CHARS', async () => {
    const huge = 'x'.repeat(2_000_000);
    const { watch, watcher, pushed } = setup({
      statusMessage: huge,
      inputRequests: { a: { method: 'elicitation/create', params: { message: huge } } },
      _meta: { big: huge },
      unknownMember: huge,
      createdAt: '2026-12-05T00:00:00Z',
    });
    const open = new AbortController();
    watch.watch(['gwtk1.big'], watcher(open.signal));
    await new Promise((r) => setImmediate(r));
    open.abort();
    expect(pushed).toHaveLength(1);
    expect(JSON.stringify(pushed[0]).length).toBeLessThanOrEqual(MAX_INLINED_CHARS);
    expect(pushed[0]).toEqual({
      taskId: 'own-gwtk1.big',
      status: 'working',
      statusMessage: 'x'.repeat(1024),
      createdAt: '2026-12-05T00:00:00Z',
      pollIntervalMs: 1000,
    });
  });

  it('a task of ordinary size is notified whole', async () => {
    const { watch, watcher, pushed } = setup({ statusMessage: 'halfway', _meta: { k: 1 } });
    const open = new AbortController();
    watch.watch(['gwtk1.small'], watcher(open.signal));
    await new Promise((r) => setImmediate(r));
    open.abort();
    expect(pushed).toEqual([
      {
        taskId: 'own-gwtk1.small',
        status: 'working',
        pollIntervalMs: 1000,
        statusMessage: 'halfway',
        _meta: { k: 1 },
      },
    ]);
  });

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

describe("TaskWatch: an upstream's task is never read with an expired token", () => {
  // the reads are paced by node:timers/promises (not faked): real 1 s waits, a mocked clock
  let clock = 1_700_000_000_000;
  beforeEach(() => {
    clock = 1_700_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
  });
  afterEach(() => jest.restoreAllMocks());

  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 50 && !done(); i++) await new Promise((r) => setTimeout(r, 100));
  };

  function upstreamSetup() {
    const reads: unknown[] = [];
    const ids = {
      open: (clientId: string) => ({
        owner: { kind: 'upstream', id: 'u26' },
        taskId: `up-${clientId}`,
      }),
    } as unknown as TaskIds;
    const upstreamTasks = {
      forward: (
        _method: string,
        _owner: unknown,
        taskId: string,
        _clientId: string,
        _params: unknown,
        context: { headers: Record<string, unknown> },
      ) => {
        reads.push(context.headers.authorization);
        return Promise.resolve({ taskId, status: 'working', pollIntervalMs: 1000 });
      },
    } as unknown as UpstreamTasks;
    const registry = {
      current: () => ({ extras: { upstreams: new Map([['u26', {}]]) } }),
    } as unknown as RegistryService;
    const watch = new TaskWatch(ids, {} as GatewayTasks, upstreamTasks, registry);
    const watcher = (
      token: string,
      seconds: number,
      signal: AbortSignal,
      expired = jest.fn(),
    ): TaskWatcher => ({
      caller: { subject: 'alice', expiresAt: clock / 1000 + seconds } as CallerIdentity,
      access: undefined,
      headers: { authorization: `Bearer ${token}` },
      signal,
      push: () => undefined,
      onCredentialExpired: expired,
    });
    return { watch, watcher, reads };
  }

  it("is read with a listen whose token has not expired: the caller's other listen's after the first one's exp", async () => {
    const { watch, watcher, reads } = upstreamSetup();
    const open = new AbortController();
    watch.watch(['gwtk1.a'], watcher('short', 5, open.signal));
    watch.watch(['gwtk1.a'], watcher('long', 600, open.signal));
    await until(() => reads.length > 0);
    expect(reads).toEqual(['Bearer short']);
    clock += 5_000;
    await until(() => reads.length > 1);
    expect(reads).toEqual(['Bearer short', 'Bearer long']);
    open.abort();
  });

  it('when no listen has a valid token it is not read again, and the listens are told', async () => {
    const { watch, watcher, reads } = upstreamSetup();
    const open = new AbortController();
    const expired = jest.fn();
    watch.watch(['gwtk1.a'], watcher('short', 5, open.signal, expired));
    await until(() => reads.length > 0);
    clock += 5_000;
    await until(() => expired.mock.calls.length > 0);
    expect(expired).toHaveBeenCalledTimes(1);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(reads).toEqual(['Bearer short']);
    // the watch ended: its slot is free again
    expect(watch.honor(['gwtk1.b'], undefined, undefined)).toEqual(['gwtk1.b']);
    open.abort();
  });
});

describe("TaskWatch: a listen on a virtual server's path follows the view as it is now", () => {
  // the server path's view as the catalog served now resolves it: `inView` says whether the tool is in it
  const onPath = { all: false, server: 'team', sources: new Set(['jobs']), tools: new Set() };
  let inView = true;
  const narrowed = (access: unknown): CallerAccess | undefined =>
    (access === undefined || inView
      ? access
      : { ...onPath, sources: new Set(), tools: new Set() }) as CallerAccess | undefined;
  const registry = {
    current: () => ({ extras: { upstreams: new Map([['jobs', {}]]) } }),
  } as unknown as RegistryService;
  const watcher = (
    signal: AbortSignal,
    access: unknown,
    pushed: Record<string, unknown>[],
  ): TaskWatcher => ({
    caller: undefined,
    access: access as CallerAccess | undefined,
    accessNow: () => narrowed(access),
    headers: {},
    signal,
    push: (params) => pushed.push(params),
  });
  beforeEach(() => {
    inView = true;
  });

  it("a gateway task: the path's listen is dropped once the tool left the view, /mcp's goes on", async () => {
    const ids = {
      open: () => ({
        owner: { kind: 'gateway', source: 'jobs', tool: 'jobs.report' },
        taskId: 't',
      }),
    } as unknown as TaskIds;
    const gatewayTasks = {
      get: () => Promise.resolve({ taskId: 'gwtk1.t', status: 'completed', result: { x: 1 } }),
    } as unknown as GatewayTasks;
    const watch = new TaskWatch(ids, gatewayTasks, {} as UpstreamTasks, registry);
    const open = new AbortController();
    const path: Record<string, unknown>[] = [];
    const whole: Record<string, unknown>[] = [];
    expect(watch.honor(['gwtk1.t'], undefined, onPath as unknown as CallerAccess)).toEqual([
      'gwtk1.t',
    ]);
    watch.watch(['gwtk1.t'], watcher(open.signal, onPath, path));
    watch.watch(['gwtk1.t'], watcher(open.signal, undefined, whole));
    // tagged out of the view before the read answered
    inView = false;
    await new Promise((r) => setImmediate(r));
    open.abort();
    expect(path).toEqual([]);
    expect(whole).toEqual([{ taskId: 'gwtk1.t', status: 'completed', result: { x: 1 } }]);
    // and a new listen there (the request's access is the view now) is not honoured
    expect(watch.honor(['gwtk1.t'], undefined, narrowed(onPath))).toEqual([]);
  });

  it('an upstream task: no read once the tool left the view, and a read is checked against the view now', async () => {
    const ids = {
      open: () => ({ owner: { kind: 'upstream', id: 'jobs', tool: 'jobs.report' }, taskId: 't' }),
    } as unknown as TaskIds;
    const accessSent: unknown[] = [];
    const upstreamTasks = {
      forward: (...args: unknown[]) => {
        accessSent.push((args[5] as { access: unknown }).access);
        return Promise.resolve({ taskId: 'gwtk1.t', status: 'working', pollIntervalMs: 1000 });
      },
    } as unknown as UpstreamTasks;
    const watch = new TaskWatch(ids, {} as GatewayTasks, upstreamTasks, registry);
    const open = new AbortController();
    const pushed: Record<string, unknown>[] = [];
    watch.watch(['gwtk1.t'], watcher(open.signal, onPath, pushed));
    await new Promise((r) => setImmediate(r));
    expect(pushed).toHaveLength(1);
    inView = false;
    // the next read (1 s later) finds the listen no longer covering the task: the watch ends
    await new Promise((r) => setTimeout(r, 1200));
    expect(accessSent).toHaveLength(1);
    expect(pushed).toHaveLength(1);
    open.abort();
  });
});
