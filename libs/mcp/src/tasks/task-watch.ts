import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import type { IncomingHeaders } from '@app/execution';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import { RegistryService } from '@app/registry';
import { Extension, MetaKey } from '@app/wire';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import type { MethodContext } from '../handlers/method-handler';
import { granted } from '../handlers/upstream-handler-support';
import { GatewayTasks } from './gateway-tasks';
import { TaskIds } from './task-ids';
import { TERMINAL, type TaskStatus } from './task-store';
import { UpstreamTasks } from './upstream-tasks';

/** Bounds on how often one watched task is looked at, ms (its owner's `pollIntervalMs` within). */
const MIN_POLL_MILLIS = 250;
const MAX_POLL_MILLIS = 60_000;
/** After a failed look (the owner unreachable), the next one. */
const RETRY_MILLIS = 1_000;

/** Where a watch's notifications go: a client's listen stream, bound to its caller. */
export interface TaskWatcher {
  readonly caller: CallerIdentity | undefined;
  readonly access: CallerAccess | undefined;
  /** The listen's headers: an upstream's tasks/get carries the caller's credential, as a call does. */
  readonly headers: IncomingHeaders;
  /** Aborted when the listen ends: the watch stops. */
  readonly signal: AbortSignal;
  /** A `notifications/tasks` params object (a DetailedTask with the client's task id). */
  push(params: Record<string, unknown>): void;
}

/**
 * `notifications/tasks` on a `subscriptions/listen` stream whose filter names task ids (the Tasks
 * extension, SEP-2663; docs/operations.md §10 "Tasks"). The gateway watches each task for the
 * client, whoever runs it: it reads the task (`tasks/get` of an upstream with the caller's
 * credential, or the gateway's own store) at the owner's `pollIntervalMs`, and sends the
 * DetailedTask, with the client's id, when its status, message, input requests or update time
 * changed, until it ended or the listen closes. Upstreams' own task notifications are not
 * needed (they are optional), and no upstream listen is held for tasks.
 */
@Injectable()
export class TaskWatch {
  constructor(
    private readonly ids: TaskIds,
    private readonly gatewayTasks: GatewayTasks,
    private readonly upstreamTasks: UpstreamTasks,
    private readonly registry: RegistryService,
  ) {}

  /** Whether the caller may watch this id: handed to it, and its upstream in its grant. */
  canWatch(clientId: string, caller: CallerIdentity | undefined, access?: CallerAccess): boolean {
    const opened = this.ids.open(clientId, caller);
    if (opened === undefined) return false;
    if (opened.owner.kind === 'gateway') return true;
    const { id } = opened.owner;
    return granted(access, id) && this.registry.current()?.extras.upstreams.has(id) === true;
  }

  watch(clientIds: readonly string[], watcher: TaskWatcher): void {
    for (const clientId of clientIds) void this.follow(clientId, watcher);
  }

  private async follow(clientId: string, watcher: TaskWatcher): Promise<void> {
    let last = '';
    while (!watcher.signal.aborted) {
      let wait = RETRY_MILLIS;
      try {
        const task = await this.detail(clientId, watcher);
        if (watcher.signal.aborted) return;
        const { resultType: _resultType, _meta: meta, ...params } = task;
        const seen = JSON.stringify([
          params.status,
          params.statusMessage,
          params.lastUpdatedAt,
          Object.keys((params.inputRequests as object | undefined) ?? {}),
        ]);
        if (seen !== last) {
          last = seen;
          const rest = { ...(meta as Record<string, unknown> | undefined) };
          delete rest[MetaKey.serverInfo];
          watcher.push(Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params);
        }
        if (TERMINAL.has(params.status as TaskStatus)) return;
        const interval = typeof params.pollIntervalMs === 'number' ? params.pollIntervalMs : 1000;
        wait = Math.min(Math.max(interval, MIN_POLL_MILLIS), MAX_POLL_MILLIS);
      } catch (err) {
        // a task no longer known (expired, its upstream gone from the grant): nothing more to say
        if (err instanceof GatewayError && err.code === GatewayErrorCode.InvalidParams) return;
      }
      await sleep(wait, undefined, { signal: watcher.signal }).catch(() => undefined);
    }
  }

  private async detail(clientId: string, watcher: TaskWatcher): Promise<Record<string, unknown>> {
    const opened = this.ids.open(clientId, watcher.caller);
    if (opened === undefined)
      throw new GatewayError(GatewayErrorCode.InvalidParams, 'unknown taskId');
    if (opened.owner.kind === 'gateway')
      return (await this.gatewayTasks.get(opened.taskId, clientId)) as Record<string, unknown>;
    const context: MethodContext = {
      protocolVersion: '2026-07-28',
      headers: watcher.headers,
      rawBody: '',
      caller: watcher.caller,
      access: watcher.access,
      clientCapabilities: { extensions: { [Extension.tasks]: {} } },
    };
    return (await this.upstreamTasks.forward(
      'tasks/get',
      opened.owner.id,
      opened.taskId,
      clientId,
      { taskId: clientId },
      context,
    )) as Record<string, unknown>;
  }
}
