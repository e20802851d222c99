import { Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  openRedis,
  quitRedis,
  RedisBreaker,
  redisUseOptions,
  STORED_RECORD_ROOM,
  type RedisClient,
} from '@app/redis';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { openTaskRecord, sealTaskRecord } from './sealed-task-record';

/** A task's status (SEP-2663). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** A JSON-RPC error object, as a failed task carries it. */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** One task the gateway runs (a bundle tool's call), as kept (docs/operations.md §10 "Tasks"). */
export interface TaskRecord {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly statusMessage?: string;
  /** The tool's result, once completed. */
  readonly result?: object;
  /** Why it failed. */
  readonly error?: TaskError;
  /** The replica running the call, and until when (ms since the epoch) it vouches for it. */
  readonly runner: string;
  readonly leaseUntil: number;
  /** Who it was created for (a digest of the caller; '' without auth): the per-caller bound. */
  readonly owner: string;
  /**
   * The caller it may be read by, as its task id binds it (sealedCallerDigest: sub and
   * client_id; '' without auth). Absent in a record written by an earlier build (its owner
   * only): such a record is read by nobody (GatewayTasks).
   */
  readonly caller?: string;
}

/** DI token of the TaskStore. */
export const TASK_STORE = Symbol('TASK_STORE');

/**
 * Where the gateway's tasks live: Redis with REDIS_URL (every replica reads them), else this
 * replica's memory. Every write but the first is a compare-and-set: a task that ended
 * (completed, failed, cancelled) never changes again.
 */
export interface TaskStore {
  /**
   * Keeps a new task until its ttlMs passes; false when it cannot be kept: its caller holds
   * `tasks.maxTasksPerCaller` tasks (in memory: none of them ended), or (memory) the replica
   * holds `tasks.maxTasks` of which none ended.
   */
  create(record: TaskRecord): Promise<boolean>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces a task that has not ended (its expiry unchanged); false when it has ended, or is
   * gone. Rejects when the store cannot be reached.
   */
  update(record: TaskRecord): Promise<boolean>;
  /**
   * Writes back a task the store lost (Redis restarted without its data, was flushed, failed
   * over to a replica that had not got it) as the replica running its call holds it, unless one
   * is stored, until its ttlMs passes; false when one is stored or its ttlMs passed. Rejects
   * when the store cannot be reached.
   */
  restore(record: TaskRecord): Promise<boolean>;
}

function expiresAt(record: TaskRecord): number {
  return Date.parse(record.createdAt) + record.ttlMs;
}

/**
 * Tasks in this replica's memory, dropped once their ttlMs has passed, bounded three ways: at
 * most `maxTasks` (then an ended one of the caller that holds the most makes room), at most
 * `maxPerCaller` per caller (then that caller's oldest ended one; for a caller a token names,
 * never more than a quarter of `maxTasks`, so that one caller's running tasks cannot fill the
 * replica), and at most
 * `maxBytes` of results (then the oldest ended ones of the caller whose results hold the most
 * go). So one caller's tasks never push out another's unread results while it holds more than
 * they do.
 */
export class MemoryTaskStore implements TaskStore {
  /** In creation order: the first ended one found is the oldest. */
  private readonly records = new Map<string, TaskRecord>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  /** A named caller's cap: maxPerCaller, at most a quarter of maxTasks. */
  private readonly maxPerNamedCaller: number;

  constructor(
    private readonly maxTasks: number,
    private readonly maxPerCaller: number,
    private readonly maxBytes: number,
  ) {
    this.maxPerNamedCaller = Math.min(maxPerCaller, Math.max(1, Math.ceil(maxTasks / 4)));
  }

  create(record: TaskRecord): Promise<boolean> {
    this.sweep();
    const own = [...this.records.values()].filter((r) => r.owner === record.owner);
    // without auth every task is the one anonymous owner's (''): the replica is all its own
    const cap = record.owner === '' ? this.maxPerCaller : this.maxPerNamedCaller;
    if (own.length >= cap && !this.dropOldestEnded(own)) return Promise.resolve(false);
    if (this.records.size >= this.maxTasks && !this.dropFromHeaviest(() => 1))
      return Promise.resolve(false);
    this.records.set(record.taskId, record);
    return Promise.resolve(true);
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    const record = this.records.get(taskId);
    if (record !== undefined && expiresAt(record) <= Date.now()) {
      this.drop(taskId);
      return Promise.resolve(undefined);
    }
    return Promise.resolve(record);
  }

  update(record: TaskRecord): Promise<boolean> {
    const current = this.records.get(record.taskId);
    if (current === undefined || TERMINAL.has(current.status)) return Promise.resolve(false);
    this.records.set(record.taskId, record);
    const size = record.result === undefined ? 0 : JSON.stringify(record.result).length;
    this.bytes += size - (this.sizes.get(record.taskId) ?? 0);
    this.sizes.set(record.taskId, size);
    while (this.bytes > this.maxBytes) {
      const size = (r: TaskRecord): number =>
        r.taskId === record.taskId ? 0 : (this.sizes.get(r.taskId) ?? 0);
      if (!this.dropFromHeaviest(size)) break;
    }
    return Promise.resolve(true);
  }

  restore(record: TaskRecord): Promise<boolean> {
    // this store loses nothing while its replica runs: only a task dropped for room is missing
    if (this.records.has(record.taskId) || expiresAt(record) <= Date.now())
      return Promise.resolve(false);
    this.records.set(record.taskId, record);
    return Promise.resolve(true);
  }

  /**
   * Drops the oldest ended task of the caller whose ended tasks weigh the most (`weight` of
   * each: 1 to count tasks, its result's bytes to count those); false when none ended.
   */
  private dropFromHeaviest(weight: (record: TaskRecord) => number): boolean {
    const held = new Map<string | undefined, number>();
    for (const r of this.records.values())
      if (TERMINAL.has(r.status) && weight(r) > 0)
        held.set(r.owner, (held.get(r.owner) ?? 0) + weight(r));
    let heaviest: string | undefined;
    let most = 0;
    for (const [owner, amount] of held)
      if (amount > most) {
        most = amount;
        heaviest = owner;
      }
    if (most === 0) return false;
    return this.dropOldestEnded(
      [...this.records.values()].filter((r) => r.owner === heaviest && weight(r) > 0),
    );
  }

  /** Drops the first ended task of `records`; false when none ended. */
  private dropOldestEnded(records: Iterable<TaskRecord>): boolean {
    for (const r of records)
      if (TERMINAL.has(r.status)) {
        this.drop(r.taskId);
        return true;
      }
    return false;
  }

  private drop(taskId: string): void {
    this.records.delete(taskId);
    this.bytes -= this.sizes.get(taskId) ?? 0;
    this.sizes.delete(taskId);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, record] of this.records) if (expiresAt(record) <= now) this.drop(id);
  }
}

/**
 * SET the task unless the stored one has ended; keep the key's expiry. 1: written, 0: not. The
 * status is the value's first word (sealed-task-record.ts): a value without one is no task this
 * gateway keeps, and is not written over.
 */
const UPDATE_SCRIPT = `
local status = string.match(redis.call('GETRANGE', KEYS[1], 0, 31), '^([%l_]+) ')
if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1`;

/**
 * Creates a task unless its caller holds `ARGV[4]` unexpired tasks: KEYS[2] is the caller's set
 * of task ids scored by expiry (ms), trimmed of expired ones first; both keys share the
 * `{<identity>}` hash tag, so the script runs on one Redis Cluster node. 1: created, 0: not.
 */
const CREATE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

/**
 * Writes back a lost task unless one is stored: KEYS as CREATE_SCRIPT, ARGV: the record, the ms
 * left of its ttl, its expiry (ms), its id. No per-caller bound: it was counted when created. A
 * value not of the form this gateway seals (garbage, an earlier build's) is no task and is
 * written over, as a missing one is, so the replica running the call keeps it.
 */
const RESTORE_SCRIPT = `
if string.match(redis.call('GETRANGE', KEYS[1], 0, 31), '^[%l_]+ gwtr1%.') then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1`;

/**
 * The value under a task's key when it is at most ARGV[1] characters (most records: one round
 * trip), else its length: a longer one is then fetched in a bounded range (RedisTaskStore.get),
 * or not at all when it is longer than any record this gateway writes, so a hostile value of tens
 * of megabytes never crosses the network, nor holds the connection past its command bound.
 */
const GET_SHORT_SCRIPT = `
local length = redis.call('STRLEN', KEYS[1])
if length > tonumber(ARGV[1]) then return length end
return redis.call('GET', KEYS[1])`;

/** Records up to this many characters come back with GET_SHORT_SCRIPT's one round trip. */
const SHORT_RECORD_CHARS = 65_536;

/**
 * Tasks in Redis under `<keyPrefix>:{<identity>}:task:<taskId>` (sealed, sealed-task-record.ts;
 * expiring with the task's ttlMs), each caller's ids in `<keyPrefix>:{<identity>}:task:of:<caller digest>` (the per-caller
 * bound), every command bounded by `mcp.redis.commandTimeoutMillis`, none queued while Redis is
 * away and none sent from a failure until it answers again (RedisBreaker): a task cannot then be created (the call runs without one, or -32603 for a tool that
 * requires one) or read (-32603).
 */
export class RedisTaskStore implements TaskStore, OnApplicationShutdown {
  private readonly prefix: string;
  private readonly breaker: RedisBreaker;

  private readonly maxPerCaller: number;
  /**
   * The longest record read: it holds a result (at most `tasks.maxResultBytes` of JSON,
   * gateway-tasks.ts) or an error (from one answer, `execution.maxResponseBytes`); twice that,
   * and room for the record (docs/operations.md §5 "Redis: one server, Sentinel or Cluster"),
   * sealed (base64: 4/3 as long). A longer one is no task this gateway wrote: read as gone,
   * never fetched.
   */
  private readonly maxRecordChars: number;
  private readonly logger = new Logger('Tasks');
  /** The task whose unreadable record was warned about last (a client polls it: warned once). */
  private warnedUnreadable?: string;

  constructor(
    private readonly redis: RedisClient,
    config: GatewayConfig,
    private readonly seal: MrtrSeal,
  ) {
    this.prefix = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:task:`;
    this.maxPerCaller = config.mcp.tasks.maxTasksPerCaller;
    this.maxRecordChars = Math.ceil(
      ((2 * Math.max(config.mcp.tasks.maxResultBytes, config.mcp.execution.maxResponseBytes) +
        STORED_RECORD_ROOM) *
        4) /
        3,
    );
    this.breaker = new RedisBreaker(redis, this.logger, {
      away: 'Redis is unreachable: tasks can be neither created nor read until it is back',
      back: 'Redis is back: tasks are kept again',
    });
    redis.connect().catch(() => this.breaker.failed());
  }

  async create(record: TaskRecord): Promise<boolean> {
    const now = Date.now();
    const created = await this.guard(() =>
      this.redis.eval(
        CREATE_SCRIPT,
        2,
        this.prefix + record.taskId,
        `${this.prefix}of:${record.owner}`,
        sealTaskRecord(this.seal, record, expiresAt(record)),
        String(record.ttlMs),
        String(now),
        String(this.maxPerCaller),
        String(now + record.ttlMs),
        record.taskId,
      ),
    );
    return created === 1;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const key = this.prefix + taskId;
    let stored = await this.guard(() =>
      this.redis.eval(GET_SHORT_SCRIPT, 1, key, String(SHORT_RECORD_CHARS)),
    );
    if (typeof stored === 'number' && stored <= this.maxRecordChars)
      // a range, not GET: a value replaced meanwhile by a longer one still comes back bounded
      stored = await this.guard(() => this.redis.getrange(key, 0, this.maxRecordChars));
    if (stored === null || stored === '') return undefined;
    const record =
      typeof stored === 'string' && stored.length <= this.maxRecordChars
        ? openTaskRecord(this.seal, taskId, stored, this.maxRecordChars)
        : undefined;
    if (record === undefined) this.unreadable(taskId, stored);
    return record;
  }

  async update(record: TaskRecord): Promise<boolean> {
    const written = await this.guard(() =>
      this.redis.eval(
        UPDATE_SCRIPT,
        1,
        this.prefix + record.taskId,
        sealTaskRecord(this.seal, record, expiresAt(record)),
      ),
    );
    return written === 1;
  }

  async restore(record: TaskRecord): Promise<boolean> {
    const left = expiresAt(record) - Date.now();
    if (left <= 0) return false;
    const written = await this.guard(() =>
      this.redis.eval(
        RESTORE_SCRIPT,
        2,
        this.prefix + record.taskId,
        `${this.prefix}of:${record.owner}`,
        sealTaskRecord(this.seal, record, expiresAt(record)),
        String(left),
        String(expiresAt(record)),
        record.taskId,
      ),
    );
    return written === 1;
  }

  /**
   * A value under a task's key that is no record this gateway sealed for it: read as gone
   * (-32602 to its caller, as an unknown id), said once per task in one short line.
   */
  private unreadable(taskId: string, stored: unknown): void {
    if (this.warnedUnreadable === taskId) return;
    this.warnedUnreadable = taskId;
    const what =
      typeof stored === 'string' && stored.length <= this.maxRecordChars
        ? `of ${stored.length} characters is not one this gateway sealed for it (written around it, by an earlier build, or with a key MCP_SESSION_KEYS no longer holds)`
        : 'is longer than any this gateway writes (not fetched)';
    this.logger.warn(
      `A task's record in Redis (task ${taskId.slice(0, 8)}…) ${what}; read as gone`,
    );
  }

  onApplicationShutdown(): Promise<void> {
    this.breaker.close();
    return quitRedis(this.redis);
  }

  private guard<T>(command: () => Promise<T>): Promise<T> {
    return this.breaker.run(command);
  }
}

/** The store: Redis when the gateway has one (ioredis loaded only then), else memory. */
export const taskStoreProvider: Provider = {
  provide: TASK_STORE,
  useFactory: async (config: GatewayConfig, seal: MrtrSeal): Promise<TaskStore> => {
    const { maxTasks, maxTasksPerCaller, maxStoredBytes } = config.mcp.tasks;
    if (config.redisServer === undefined)
      return new MemoryTaskStore(maxTasks, maxTasksPerCaller, maxStoredBytes);
    const client = await openRedis(
      config.redisServer,
      redisUseOptions('requestPath', config.mcp.redis),
    );
    return new RedisTaskStore(client, config, seal);
  },
  inject: [GATEWAY_CONFIG, MrtrSeal],
};
