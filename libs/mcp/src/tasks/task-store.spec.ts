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
  ...extra,
});

describe('MemoryTaskStore (docs/operations.md §10 "Tasks")', () => {
  it('an ended task never changes again; a working one does', async () => {
    const store = new MemoryTaskStore(10);
    await store.create(record('a'));
    expect(await store.update(record('a', { status: 'cancelled' }))).toBe(true);
    expect(await store.update(record('a', { status: 'completed', result: {} }))).toBe(false);
    expect((await store.get('a'))?.status).toBe('cancelled');
    expect(await store.update(record('missing'))).toBe(false);
  });

  it('at maxTasks the oldest ended task makes room; with none ended a new one is refused', async () => {
    const store = new MemoryTaskStore(2);
    expect(await store.create(record('a'))).toBe(true);
    expect(await store.create(record('b'))).toBe(true);
    expect(await store.create(record('c'))).toBe(false);
    await store.update(record('b', { status: 'completed' }));
    expect(await store.create(record('c'))).toBe(true);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
  });

  it('a task is gone once its ttlMs has passed', async () => {
    const store = new MemoryTaskStore(10);
    await store.create(record('old', { createdAt: new Date(Date.now() - 61_000).toISOString() }));
    expect(await store.get('old')).toBeUndefined();
  });
});
