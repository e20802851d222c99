import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { CallCancellation, ToolExecutor } from '@app/execution';
import { ThrottledLines } from '@app/observability';
import type { BundleTool } from '@app/registry';
import { JsonRpcCode } from '@app/wire';
import { ForwardedError } from '../errors/gateway-error';
import type { MethodContext } from '../methods/method-handler';
import type { CallerIdentity } from '@app/identity';
import { sealedCallerDigest } from '../sealing/sealed-caller';
import { callerDigest } from '../session/caller-key';
import { TaskIds } from './task-ids';
import { unknownTask } from './task-errors';
import { TASK_STORE, TERMINAL, type TaskRecord, type TaskStore } from './task-store';

/**
 * Why a task nobody vouches for any more failed: its replica stopped, or could not record the
 * outcome, before the call ended. The call may have run: the client is told to check.
 */
export const RUNNER_STOPPED =
  'The gateway replica running this task stopped, or could not record its outcome, before the call ended; the call may have run: check before calling the tool again';

/** Pause between attempts to record a call's outcome while the store is unreachable, ms. */
const OUTCOME_RETRY_MILLIS = 1_000;

function stopped(record: TaskRecord): TaskRecord {
  return {
    ...record,
    status: 'failed',
    lastUpdatedAt: new Date().toISOString(),
    error: { code: JsonRpcCode.InternalError, message: RUNNER_STOPPED },
  };
}

/**
 * Bundle tools the gateway runs as tasks (the Tasks extension, SEP-2663; docs/operations.md §10
 * "Tasks"): a tool whose manifest says `execution.taskSupport: optional|required`, called by a
 * 2026-07-28 request that declares the extension, answers at once with a CreateTaskResult while
 * the call to the Tool Service goes on without the client's connection. Its status and result
 * are kept (TaskStore: Redis, read by every replica, or this replica's memory) for
 * `mcp.tasks.ttlSeconds`; the replica running the call renews a lease on it (`mcp.tasks.leaseSeconds`), so a task whose
 * replica stopped (or was killed) before the call ended is reported failed with that reason.
 */
@Injectable()
export class GatewayTasks implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Tasks');
  /**
   * What callers' calls and reads cause while a bound is reached or the store is down: counted
   * per kind, the first at once, then at most once a minute (docs/operations.md §4 "What
   * outsiders can make the gateway log").
   */
  private readonly lines = new ThrottledLines((line) => this.logger.warn(line));
  private readonly replica = randomUUID();
  private readonly ttlMs: number;
  private readonly pollIntervalMs: number;
  /** How long a replica vouches for a task it runs (`mcp.tasks.leaseSeconds`), ms. */
  private readonly leaseMillis: number;
  /** Largest result a task keeps (`mcp.tasks.maxResultBytes`), bytes of JSON. */
  private readonly maxResultBytes: number;
  /** Calls running here as tasks, with the record as created (what a store that lost it gets back). */
  private readonly running = new Map<
    string,
    {
      readonly cancellation: CallCancellation;
      readonly lease: NodeJS.Timeout;
      readonly record: TaskRecord;
    }
  >();

  constructor(
    @Inject(TASK_STORE) private readonly store: TaskStore,
    private readonly executor: ToolExecutor,
    private readonly ids: TaskIds,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ttlMs = config.mcp.tasks.ttlSeconds * 1000;
    this.pollIntervalMs = config.mcp.tasks.pollIntervalMillis;
    this.leaseMillis = config.mcp.tasks.leaseSeconds * 1000;
    this.maxResultBytes = config.mcp.tasks.maxResultBytes;
  }

  /**
   * Starts the call as a task: its CreateTaskResult, with the client's id for it (TaskIds); or
   * undefined when no task can be kept now (Redis unreachable, or `mcp.tasks.maxTasks` tasks of
   * which none ended in memory), and the caller decides whether to run the call synchronously.
   */
  async start(
    tool: BundleTool,
    rawArguments: string,
    context: MethodContext,
  ): Promise<object | undefined> {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.ttlMs,
      pollIntervalMs: this.pollIntervalMs,
      runner: this.replica,
      leaseUntil: Date.now() + this.leaseMillis,
      owner: callerDigest(context.caller) ?? '',
      caller: sealedCallerDigest(context.caller),
    };
    const kept = await this.store.create(record).catch(() => false);
    if (!kept) {
      const name = tool.name;
      this.lines.note('not-kept', (count) =>
        count === 1
          ? `Tool ${name}: no task could be kept now (the caller's or the store's bound reached, or the store unreachable)`
          : `${count} tasks could not be kept since the last line, the last of tool ${name} (the caller's or the store's bound reached, or the store unreachable)`,
      );
      return undefined;
    }
    this.run(record, tool, rawArguments, context);
    return {
      resultType: 'task',
      taskId: this.ids.handOut(
        { kind: 'gateway', source: tool.sourceId, tool: tool.name },
        record.taskId,
        context.caller,
        this.ttlMs,
      ),
      status: record.status,
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      ttlMs: record.ttlMs,
      pollIntervalMs: record.pollIntervalMs,
    };
  }

  /** `tasks/get`: the DetailedTask, its result or error inlined once it ended. */
  async get(taskId: string, clientId: string, caller: CallerIdentity | undefined): Promise<object> {
    let record = await this.read(taskId, caller);
    const now = Date.now();
    if (record.status === 'working' && record.leaseUntil < now) {
      // running here: the store was away while the lease was due (renewed now, not failed)
      if (this.running.has(taskId)) void this.renew(taskId);
      // nobody vouches for it any more: its replica stopped before the call ended. Two leases
      // more first: the replica running it renews every third of a lease once the store
      // answers again, so a store away for less than that leaves its tasks running.
      else if (record.leaseUntil + 2 * this.leaseMillis < now) {
        record = stopped(record);
        await this.store.update(record).catch(() => false);
      }
    }
    return {
      taskId: clientId,
      status: record.status,
      ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      ttlMs: record.ttlMs,
      pollIntervalMs: record.pollIntervalMs,
      ...(record.result === undefined
        ? {}
        : { result: { ...record.result, resultType: 'complete' } }),
      ...(record.error === undefined ? {} : { error: record.error }),
    };
  }

  /**
   * `tasks/cancel`: a task that has not ended is cancelled (its call cut when it runs here; on
   * another replica, at that replica's next lease renewal); an ended one stays as it is. The
   * answer is an empty ack either way.
   */
  async cancel(taskId: string, caller: CallerIdentity | undefined): Promise<object> {
    const record = await this.read(taskId, caller);
    if (!TERMINAL.has(record.status)) {
      await this.store
        .update({ ...record, status: 'cancelled', lastUpdatedAt: new Date().toISOString() })
        .catch((err: unknown) => {
          throw this.unreadable(err);
        });
      this.running.get(taskId)?.cancellation.abort('cancelled');
    }
    return {};
  }

  /** `tasks/update`: a bundle tool never asks for input, so there is nothing to answer: an ack. */
  async update(taskId: string, caller: CallerIdentity | undefined): Promise<object> {
    await this.read(taskId, caller);
    return {};
  }

  /**
   * At shutdown, once the /mcp listener has drained (apps/gateway/src/graceful-shutdown.ts):
   * calls still running here get what is left of the grace period to end; those still running
   * then end failed, with the reason (RUNNER_STOPPED), and are cut.
   */
  async drain(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, deadline - Date.now())));
    await this.stopRunning();
  }

  /** Nothing runs on after the application closes (drain did it already on a SIGTERM). */
  beforeApplicationShutdown(): Promise<void> {
    return this.stopRunning();
  }

  private async stopRunning(): Promise<void> {
    await Promise.all(
      [...this.running.keys()].map(async (taskId) => {
        const cancellation = this.end(taskId);
        const record = await this.store.get(taskId).catch(() => undefined);
        if (record !== undefined) await this.store.update(stopped(record)).catch(() => false);
        cancellation?.abort('shutdown');
      }),
    );
  }

  private run(record: TaskRecord, tool: BundleTool, rawArguments: string, context: MethodContext) {
    const cancellation = new CallCancellation();
    const lease = setInterval(() => void this.renew(record.taskId), this.leaseMillis / 3);
    lease.unref();
    this.running.set(record.taskId, { cancellation, lease, record });
    // the call is the client's (its headers and credential), no longer its connection's
    this.executor
      .call(tool, rawArguments, context.headers, tool.validateOutput, cancellation, context.caller)
      .then(
        (result): Pick<TaskRecord, 'status' | 'result' | 'error'> => ({
          status: 'completed',
          result,
        }),
        (): Pick<TaskRecord, 'status' | 'result' | 'error'> => ({
          status: 'failed',
          error: { code: JsonRpcCode.InternalError, message: 'Internal error' },
        }),
      )
      .then((outcome) => this.record(record.taskId, this.bounded(outcome)))
      .catch(() =>
        this.lines.note('not-recorded', (count) =>
          count === 1
            ? `Task of ${tool.name}: its outcome could not be recorded`
            : `${count} tasks' outcomes could not be recorded since the last line, the last of tool ${tool.name}`,
        ),
      );
  }

  /** An outcome as kept: a result over `mcp.tasks.maxResultBytes` becomes a failure saying so. */
  private bounded(outcome: Pick<TaskRecord, 'status' | 'result' | 'error'>) {
    if (outcome.result === undefined) return outcome;
    const bytes = Buffer.byteLength(JSON.stringify(outcome.result));
    if (bytes <= this.maxResultBytes) return outcome;
    return {
      status: 'failed' as const,
      error: {
        code: JsonRpcCode.InternalError,
        message: `Internal error: the tool's result (${bytes} bytes) is over mcp.tasks.maxResultBytes (${this.maxResultBytes}); the tool ran. Called without the Tasks extension it answers in full`,
      },
    };
  }

  /**
   * Writes a call's outcome, retried every second while the store is unreachable, for as long as
   * the lease would last; the lease is renewed meanwhile, so a short outage loses nothing. A task
   * that ended meanwhile (cancelled) stays as it is.
   */
  private async record(
    taskId: string,
    outcome: Pick<TaskRecord, 'status' | 'result' | 'error'>,
  ): Promise<void> {
    const deadline = Date.now() + 2 * this.leaseMillis;
    try {
      for (;;) {
        if (!this.running.has(taskId)) return;
        try {
          const current = await this.store.get(taskId);
          if (current !== undefined && TERMINAL.has(current.status)) return;
          // the store's copy, or (lost there) this replica's; neither: nothing to write to
          const base = current ?? this.running.get(taskId)?.record;
          if (base === undefined) return;
          const written: TaskRecord = {
            ...base,
            ...outcome,
            lastUpdatedAt: new Date().toISOString(),
          };
          // the store lost it (restarted without its data): written back with its outcome
          if (current === undefined) await this.store.restore(written);
          else await this.store.update(written);
          return;
        } catch (err) {
          if (Date.now() >= deadline) throw err;
          await new Promise((resolve) => setTimeout(resolve, OUTCOME_RETRY_MILLIS));
        }
      }
    } finally {
      this.end(taskId);
    }
  }

  /**
   * Renews the lease of a task running here; cuts the call when it was cancelled elsewhere. A
   * task the store lost (Redis restarted without its data, was flushed, failed over) is written
   * back as this replica holds it, not taken for a cancellation; one whose ttlMs passed ends.
   */
  private async renew(taskId: string): Promise<void> {
    try {
      const current = await this.store.get(taskId);
      const leaseUntil = Date.now() + this.leaseMillis;
      let renewed: boolean;
      if (current !== undefined)
        renewed =
          !TERMINAL.has(current.status) && (await this.store.update({ ...current, leaseUntil }));
      else {
        const held = this.running.get(taskId)?.record;
        renewed =
          held !== undefined &&
          ((await this.store.restore({ ...held, leaseUntil })) ||
            // written back meanwhile by this replica's own earlier renewal: kept
            (await this.store.get(taskId)) !== undefined);
        if (renewed)
          this.logger.warn(`Task ${taskId.slice(0, 12)}…: its store lost it; written back`);
      }
      if (!renewed) this.end(taskId)?.abort('cancelled');
    } catch {
      // the store is away: try again at the next renewal
    }
  }

  /** Forgets a call running here: its cancellation, or undefined when it was not running. */
  private end(taskId: string): CallCancellation | undefined {
    const running = this.running.get(taskId);
    if (running === undefined) return undefined;
    clearInterval(running.lease);
    this.running.delete(taskId);
    return running.cancellation;
  }

  /**
   * The record, for the caller it was created for only: its id binds the caller already
   * (TaskIds); the record binds it too, so a record is never another caller's whatever id
   * reaches it. A record of an earlier build (no `caller`) is refused as unknown: its id does not
   * open any more either.
   */
  private async read(taskId: string, caller: CallerIdentity | undefined): Promise<TaskRecord> {
    let record: TaskRecord | undefined;
    try {
      record = await this.store.get(taskId);
    } catch (err) {
      throw this.unreadable(err);
    }
    if (record === undefined || record.caller !== sealedCallerDigest(caller)) throw unknownTask();
    return record;
  }

  private unreadable(err: unknown): ForwardedError {
    const cause = (err instanceof Error ? err.message : String(err)).slice(0, 200);
    this.lines.note('unreadable', (count) =>
      count === 1
        ? `Tasks cannot be read (${cause})`
        : `Tasks could not be read ${count} times since the last line (the last: ${cause})`,
    );
    return new ForwardedError(
      JsonRpcCode.InternalError,
      'Internal error: tasks cannot be read now (their store is unreachable); try again',
    );
  }
}
