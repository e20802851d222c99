import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import type { GatewayConfig } from '@app/config';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { MemoryTaskStore, RedisTaskStore, type TaskRecord } from './task-store';

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
    expect(await store.create(record('b', { owner: 'bob' }))).toBe(true);
    expect(await store.create(record('c', { owner: 'carol' }))).toBe(false);
    await store.update(record('b', { owner: 'bob', status: 'completed' }));
    expect(await store.create(record('c', { owner: 'carol' }))).toBe(true);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
  });

  it('at maxTasks the caller holding the most ended tasks makes room, not the one whose ended task is oldest', async () => {
    const store = new MemoryTaskStore(4, 10, 1 << 20);
    await store.create(record('alice-1'));
    await store.update(record('alice-1', { status: 'completed' }));
    for (const id of ['bob-1', 'bob-2', 'bob-3']) {
      await store.create(record(id, { owner: 'bob' }));
      await store.update(record(id, { owner: 'bob', status: 'completed' }));
    }
    expect(await store.create(record('carol-1', { owner: 'carol' }))).toBe(true);
    expect(await store.get('alice-1')).toBeDefined();
    expect(await store.get('bob-1')).toBeUndefined();
  });

  it('one caller holds at most a quarter of maxTasks, so its running tasks never fill the replica', async () => {
    const store = new MemoryTaskStore(8, 100, 1 << 20);
    expect(await store.create(record('b1', { owner: 'bob' }))).toBe(true);
    expect(await store.create(record('b2', { owner: 'bob' }))).toBe(true);
    expect(await store.create(record('b3', { owner: 'bob' }))).toBe(false);
    expect(await store.create(record('a1'))).toBe(true);
  });

  it("without auth (the one anonymous owner '') the replica's tasks are all its own, up to maxPerCaller", async () => {
    const store = new MemoryTaskStore(8, 8, 1 << 20);
    const created: boolean[] = [];
    for (let i = 0; i < 9; i += 1) created.push(await store.create(record(`t${i}`, { owner: '' })));
    expect(created).toEqual([true, true, true, true, true, true, true, true, false]);
  });

  it("past maxBytes the caller whose results hold the most loses its oldest, never another caller's unread result", async () => {
    const store = new MemoryTaskStore(100, 100, 3000);
    const big = { content: [{ type: 'text', text: 'x'.repeat(1000) }] };
    await store.create(record('alice-1'));
    await store.update(record('alice-1', { status: 'completed', result: { content: [] } }));
    for (const id of ['bob-1', 'bob-2', 'bob-3', 'bob-4']) {
      await store.create(record(id, { owner: 'bob' }));
      await store.update(record(id, { owner: 'bob', status: 'completed', result: big }));
    }
    expect(await store.get('alice-1')).toBeDefined();
    expect(await store.get('bob-1')).toBeUndefined();
    expect(await store.get('bob-4')).toBeDefined();
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

describe('RedisTaskStore against a real Redis on 127.0.0.1:6379 (docs/security.md "Records in Redis")', () => {
  const identity = `task-store-spec-${process.pid}`;
  const config = {
    sessionKeys: [],
    mcp: {
      identity,
      redis: { keyPrefix: 'spec' },
      tasks: { maxTasksPerCaller: 10, maxResultBytes: 65_536 },
      execution: { maxResponseBytes: 65_536 },
    },
  } as unknown as GatewayConfig;
  let redis: Redis;
  let store: RedisTaskStore;

  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
    store = new RedisTaskStore(redis, config, new MrtrSeal(config));
  });

  afterAll(async () => {
    await store.onApplicationShutdown();
    jest.restoreAllMocks();
  });

  it.each(['working', 'input_required'] as const)(
    'a %s task is updated, its sealed record never restored over, and once ended it never changes again',
    async (status) => {
      const id = `t-${status}`;
      expect(await store.create(record(id, { status }))).toBe(true);
      expect(await store.update(record(id, { status, statusMessage: 'step 2' }))).toBe(true);
      expect(await store.get(id)).toMatchObject({ status, statusMessage: 'step 2' });
      // a sealed record stays: restore writes back only a lost or unreadable one
      expect(await store.restore(record(id, { status, statusMessage: 'older' }))).toBe(false);
      expect(await store.update(record(id, { status: 'completed', result: { ok: 1 } }))).toBe(true);
      expect(await store.update(record(id, { status: 'working' }))).toBe(false);
      expect(await store.get(id)).toMatchObject({ status: 'completed', result: { ok: 1 } });
    },
  );
});
