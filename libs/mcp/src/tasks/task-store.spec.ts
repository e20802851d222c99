import { MemoryTaskStore, type TaskRecord } from './task-store';

const record = (taskId: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({
  taskId,
  status: 'working',
  createdAt: new Date().toISOString(),
  lastUpdatedAt: new Date().toISOString(),
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  runner: 'r',
  leaseUntil: Date.now() + 15_000,
  owner: 'alice',
  ...extra,
});

describe('MemoryTaskStore (docs/operations.md §10 "Tasks")', () => {
  it('an ended task never changes again; a working one does', async () => {
    const store = new MemoryTaskStore(10, 10, 1 << 20);
    await store.create(record('a'));
    expect(await store.update(record('a', { status: 'cancelled' }))).toBe(true);
    expect(await store.update(record('a', { status: 'completed', result: {} }))).toBe(false);
    expect((await store.get('a'))?.status).toBe('cancelled');
    expect(await store.update(record('missing'))).toBe(false);
  });

  it('at maxTasks the oldest ended task makes room; with none ended a new one is refused', async () => {
    const store = new MemoryTaskStore(2, 10, 1 << 20);
    expect(await store.create(record('a'))).toBe(true);
    expect(await store.create(record('b'))).toBe(true);
    expect(await store.create(record('c'))).toBe(false);
    await store.update(record('b', { status: 'completed' }));
    expect(await store.create(record('c'))).toBe(true);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
  });

  it('a task is gone once its ttlMs has passed', async () => {
    const store = new MemoryTaskStore(10, 10, 1 << 20);
    await store.create(record('old', { createdAt: new Date(Date.now() - 61_000).toISOString() }));
    expect(await store.get('old')).toBeUndefined();
  });

  it("a caller at maxPerCaller drops its own oldest ended task, never another caller's", async () => {
    const store = new MemoryTaskStore(100, 2, 1 << 20);
    await store.create(record('bob-1', { owner: 'bob' }));
    await store.update(record('bob-1', { owner: 'bob', status: 'completed' }));
    await store.create(record('a1'));
    await store.create(record('a2'));
    expect(await store.create(record('a3'))).toBe(false);
    await store.update(record('a1', { status: 'completed' }));
    expect(await store.create(record('a3'))).toBe(true);
    expect(await store.get('a1')).toBeUndefined();
    expect(await store.get('bob-1')).toBeDefined();
  });

  it('past maxBytes of results the oldest ended tasks go', async () => {
    const store = new MemoryTaskStore(100, 100, 3000);
    const big = { content: [{ type: 'text', text: 'x'.repeat(1000) }] };
    for (const id of ['t1', 't2', 't3', 't4']) {
      await store.create(record(id));
      await store.update(record(id, { status: 'completed', result: big }));
    }
    expect(await store.get('t1')).toBeUndefined();
    expect(await store.get('t4')).toBeDefined();
  });
});
