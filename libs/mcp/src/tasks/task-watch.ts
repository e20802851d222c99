import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { CallCancellation, type IncomingHeaders } from '@app/execution';
import { allowsTool, callerExpired, type CallerAccess, type CallerIdentity } from '@app/identity';
import { RegistryService } from '@app/registry';
import { Extension, JsonRpcCode, MetaKey } from '@app/wire';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import type { MethodContext } from '../methods/method-handler';
import { callerDigest } from '../session/caller-key';
import { GatewayTasks } from './gateway-tasks';
import { mayUseUpstreamTask, TaskIds, type OpenedTaskId } from './task-ids';
import { TERMINAL, type TaskStatus } from './task-store';
import { UpstreamTasks } from './upstream-tasks';

/** Distinct tasks one caller may have watched at once on a replica, over all its listens. */
export const MAX_WATCHED_TASKS_PER_CALLER = 64;
/** Bounds on how often a watched task is read, ms (its owner's `pollIntervalMs` within). */
const MIN_POLL_MILLIS = 1_000;
const MAX_POLL_MILLIS = 60_000;
/** After a failed read (the owner unreachable), the next one. */
const RETRY_MILLIS = 1_000;
/**
 * Largest `result`/`error` a notification inlines (JSON characters); a larger one is left out
 * (the extension makes inlining optional): the client reads it with tasks/get, and one large
 * result cannot push a listen past `listen.maxQueuedBytes`.
 */
export const MAX_INLINED_CHARS = 65_536;

/** Where a watch's notifications go: a client's listen stream, bound to its caller. */
export interface TaskWatcher {
  readonly caller: CallerIdentity | undefined;
  /** What the listen's caller may use as it opened (on a virtual server's path, the view then). */
  readonly access: CallerAccess | undefined;
  /**
   * What it may use now: on a virtual server's path the view resolved again for the catalog
   * served now (SubscriptionsListen, docs/operations.md §16), as a request there is. Each read
   * and notification of a task is checked against it (TaskWatch); absent: `access`.
   */
  readonly accessNow?: () => CallerAccess | undefined;
  /** The listen's headers: an upstream's tasks/get carries the caller's credential, as a call does. */
  readonly headers: IncomingHeaders;
  /** Aborted when the listen ends: it stops watching. */
  readonly signal: AbortSignal;
  /** A `notifications/tasks` params object (a DetailedTask with the client's task id). */
  push(params: Record<string, unknown>): void;
  /**
   * The watch of an upstream's task ended because every listen watching it is past its caller's
   * token `exp` (within `clockSkewSeconds`): its next `tasks/get` would carry an expired token.
   */
  readonly onCredentialExpired?: () => void;
}

/** No listen watching an upstream's task has a token that has not expired: it is not read. */
class NoValidCredential extends Error {}

/** One task watched for one caller, shared by all its listens that name it. */
interface Watch {
  readonly clientId: string;
  readonly caller: string;
  readonly watchers: Set<TaskWatcher>;
  readonly stop: AbortController;
  /** What was sent last, for a listen that joins later. */
  last?: Record<string, unknown>;
}

/** The members of a DetailedTask a notification always keeps: the task's state in a few scalars. */
const TASK_STATE_KEYS = [
  'taskId',
  'status',
  'statusMessage',
  'createdAt',
  'lastUpdatedAt',
  'ttlMs',
  'pollIntervalMs',
] as const;

/** Largest `statusMessage` (characters) a notification cut to the task's state keeps. */
const MAX_STATUS_MESSAGE_CHARS = 1_024;

/**
 * The notification params of a DetailedTask: no envelope members; a large result left out, and a
 * notification still over MAX_INLINED_CHARS (a huge status message, input requests or `_meta`)
 * cut to the task's state, which the client completes with tasks/get: what an upstream says of
 * a task cannot push a listen past `listen.maxQueuedBytes` and close it.
 */
function notificationParams(task: Record<string, unknown>): Record<string, unknown> {
  const full = fullNotificationParams(task);
  if (JSON.stringify(full).length <= MAX_INLINED_CHARS) return full;
  const state: Record<string, unknown> = {};
  for (const key of TASK_STATE_KEYS) {
    const value = full[key];
    if (value === undefined || (typeof value === 'object' && value !== null)) continue;
    state[key] =
      key === 'statusMessage' && typeof value === 'string'
        ? value.slice(0, MAX_STATUS_MESSAGE_CHARS)
        : value;
  }
  return state;
}

function fullNotificationParams(task: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _resultType, _meta: meta, ...params } = task;
  const rest = { ...(meta as Record<string, unknown> | undefined) };
  delete rest[MetaKey.serverInfo];
  const out: Record<string, unknown> =
    Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params;
  for (const key of ['result', 'error'] as const)
    if (out[key] !== undefined && JSON.stringify(out[key]).length > MAX_INLINED_CHARS)
      delete out[key];
  return out;
}

/** A task the owner no longer knows (-32602 from the gateway or the upstream): nothing more to say. */
function isGone(err: unknown): boolean {
  if (err instanceof ForwardedError) return err.rpcCode === JsonRpcCode.InvalidParams;
  return err instanceof GatewayError && err.code === GatewayErrorCode.InvalidParams;
}

/**
 * `notifications/tasks` on a `subscriptions/listen` stream whose filter names task ids (the Tasks
 * extension, SEP-2663; docs/operations.md §10 "Tasks"). The gateway watches each task for the
 * client, whoever runs it: it reads the task (`tasks/get` of an upstream with the caller's
 * credential, or the gateway's own store) at the owner's `pollIntervalMs`, at most once a second,
 * and sends the DetailedTask, with the client's id, when its status, message, input requests or
 * update time changed, until it ended, the owner no longer knows it, or the last listen naming it
 * closed (its read in flight is cut then). An upstream's task is read with a listen whose token
 * has not expired; when none has (they live to `exp` + `clockSkewSeconds`), it is not read again
 * and those listens end as at their expiry (TaskWatcher.onCredentialExpired). One read per task
 * and caller, whatever the number of its listens; at most MAX_WATCHED_TASKS_PER_CALLER tasks per
 * caller on a replica. Before each
 * read and each notification, every listen is checked against its caller's grant as it is now
 * (on a virtual server's path, the view resolved for the catalog served now, docs/operations.md
 * §16), as tasks/get is: a listen no longer covering the task's tool is dropped from the watch
 * and told nothing more of it (§10 "Grants").
 */
@Injectable()
export class TaskWatch {
  /** By caller digest and client id. */
  private readonly watches = new Map<string, Watch>();
  private readonly perCaller = new Map<string, number>();

  constructor(
    private readonly ids: TaskIds,
    private readonly gatewayTasks: GatewayTasks,
    private readonly upstreamTasks: UpstreamTasks,
    private readonly registry: RegistryService,
  ) {}

  /**
   * The ids of `requested` this caller may watch: handed to it, their owner (the upstream, or the
   * bundle tool) in its grant, within its MAX_WATCHED_TASKS_PER_CALLER (a task it watches already
   * costs nothing more).
   */
  honor(
    requested: readonly string[],
    caller: CallerIdentity | undefined,
    access: CallerAccess | undefined,
  ): string[] {
    const who = callerDigest(caller) ?? '';
    let room = MAX_WATCHED_TASKS_PER_CALLER - (this.perCaller.get(who) ?? 0);
    return requested.filter((clientId) => {
      if (!this.mayWatch(clientId, caller, access)) return false;
      if (this.watches.has(`${who}\u0000${clientId}`)) return true;
      if (room <= 0) return false;
      room -= 1;
      return true;
    });
  }

  /**
   * Watches these ids (as honoured) for one listen, until its signal aborts. A signal that has
   * already aborted watches nothing: its 'abort' event will not come again, so a watch it joined
   * would never be left and would poll the upstream for good, holding the caller's watch slots.
   */
  watch(clientIds: readonly string[], watcher: TaskWatcher): void {
    if (watcher.signal.aborted) return;
    const who = callerDigest(watcher.caller) ?? '';
    for (const clientId of clientIds) {
      const key = `${who}\u0000${clientId}`;
      let watch = this.watches.get(key);
      if (watch === undefined) {
        watch = { clientId, caller: who, watchers: new Set(), stop: new AbortController() };
        this.watches.set(key, watch);
        this.perCaller.set(who, (this.perCaller.get(who) ?? 0) + 1);
        void this.follow(watch, watcher);
      } else if (watch.last !== undefined) watcher.push(watch.last);
      const joined = watch;
      joined.watchers.add(watcher);
      watcher.signal.addEventListener('abort', () => this.leave(key, joined, watcher), {
        once: true,
      });
    }
  }

  private mayWatch(
    clientId: string,
    caller: CallerIdentity | undefined,
    access: CallerAccess | undefined,
  ): boolean {
    const opened = this.ids.open(clientId, caller);
    if (opened === undefined || !this.covers(opened, access)) return false;
    return (
      opened.owner.kind === 'gateway' ||
      this.registry.current()?.extras.upstreams.has(opened.owner.id) === true
    );
  }

  /**
   * What a listen may use now (a grant alone does not change while its stream lives:
   * NotificationHub's recheck closes a stream whose grant changed; a server path's view does).
   */
  private static accessNow(watcher: TaskWatcher): CallerAccess | undefined {
    return watcher.accessNow === undefined ? watcher.access : watcher.accessNow();
  }

  /** Whether this access covers the task's tool: what tasks/get checks. */
  private covers(opened: OpenedTaskId, now: CallerAccess | undefined): boolean {
    if (opened.owner.kind === 'gateway')
      return now === undefined || allowsTool(now, opened.owner.source, opened.owner.tool);
    return mayUseUpstreamTask(now, opened.owner);
  }

  /**
   * The watch's listens still covering the task (`first` while none joined yet); those that no
   * longer do are dropped from it, for good.
   */
  private covering(watch: Watch, first: TaskWatcher): TaskWatcher[] {
    const candidates = watch.watchers.size > 0 ? [...watch.watchers] : [first];
    const kept: TaskWatcher[] = [];
    for (const watcher of candidates) {
      const opened = this.ids.open(watch.clientId, watcher.caller);
      if (opened !== undefined && this.covers(opened, TaskWatch.accessNow(watcher)))
        kept.push(watcher);
      else watch.watchers.delete(watcher);
    }
    return kept;
  }

  private leave(key: string, watch: Watch, watcher: TaskWatcher): void {
    // one dropped for its grant left already
    if (!watch.watchers.delete(watcher) || watch.watchers.size > 0) return;
    this.end(key, watch);
  }

  private end(key: string, watch: Watch): void {
    if (this.watches.get(key) !== watch) return;
    this.watches.delete(key);
    const left = (this.perCaller.get(watch.caller) ?? 1) - 1;
    if (left === 0) this.perCaller.delete(watch.caller);
    else this.perCaller.set(watch.caller, left);
    watch.stop.abort();
  }

  /** Reads the task until it ended or nobody watches; `first` is whose credential reads it. */
  private async follow(watch: Watch, first: TaskWatcher): Promise<void> {
    const { signal } = watch.stop;
    let seen = '';
    const key = `${watch.caller}\u0000${watch.clientId}`;
    while (!signal.aborted) {
      let wait = RETRY_MILLIS;
      try {
        // read with the credential of a listen still open (the same caller), one whose token
        // has not expired when there is one: the listens of a caller may hold different tokens
        // only with a listen still covering the task
        const readers = this.covering(watch, first);
        if (readers.length === 0) return this.end(key, watch);
        const reader = readers.find((w) => !callerExpired(w.caller)) ?? readers[0] ?? first;
        const task = await this.detail(watch.clientId, reader, signal);
        if (signal.aborted) return;
        // the view may have changed during the read: only listens covering it now are told
        if (this.covering(watch, reader).length === 0) return this.end(key, watch);
        const params = notificationParams(task);
        const state = JSON.stringify([
          params.status,
          params.statusMessage,
          params.lastUpdatedAt,
          Object.keys((params.inputRequests as object | undefined) ?? {}),
        ]);
        if (state !== seen) {
          seen = state;
          watch.last = params;
          for (const watcher of watch.watchers) watcher.push(params);
        }
        if (TERMINAL.has(params.status as TaskStatus)) return this.end(key, watch);
        const interval = typeof params.pollIntervalMs === 'number' ? params.pollIntervalMs : 0;
        wait = Math.min(Math.max(interval, MIN_POLL_MILLIS), MAX_POLL_MILLIS);
      } catch (err) {
        if (isGone(err)) return this.end(key, watch);
        if (err instanceof NoValidCredential) {
          const told = watch.watchers.size > 0 ? [...watch.watchers] : [first];
          this.end(key, watch);
          for (const watcher of told) watcher.onCredentialExpired?.();
          return;
        }
      }
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }

  private async detail(
    clientId: string,
    watcher: TaskWatcher,
    stop: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const opened = this.ids.open(clientId, watcher.caller);
    if (opened === undefined)
      throw new GatewayError(GatewayErrorCode.InvalidParams, 'unknown taskId');
    if (opened.owner.kind === 'gateway')
      return (await this.gatewayTasks.get(opened.taskId, clientId, watcher.caller)) as Record<
        string,
        unknown
      >;
    // an upstream's read is checked against the access as it is now, as tasks/get's
    const access = TaskWatch.accessNow(watcher);
    // an upstream's tasks/get is sent by the gateway on its own, with the caller's credential:
    // never one past its exp (docs/security.md "Answers to relayed requests")
    if (callerExpired(watcher.caller)) throw new NoValidCredential();
    // the read in flight is cut when the last listen naming the task closes
    const cancellation = new CallCancellation();
    const cut = () => cancellation.abort('client-closed');
    stop.addEventListener('abort', cut, { once: true });
    const context: MethodContext = {
      protocolVersion: '2026-07-28',
      headers: watcher.headers,
      rawBody: '',
      signal: cancellation,
      caller: watcher.caller,
      access,
      clientCapabilities: { extensions: { [Extension.tasks]: {} } },
    };
    try {
      return (await this.upstreamTasks.forward(
        'tasks/get',
        opened.owner,
        opened.taskId,
        clientId,
        { taskId: clientId },
        context,
      )) as Record<string, unknown>;
    } finally {
      stop.removeEventListener('abort', cut);
    }
  }
}
