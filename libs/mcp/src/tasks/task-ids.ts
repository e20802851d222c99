import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { allowsSource, allowsTool, type CallerAccess, type CallerIdentity } from '@app/identity';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { sealedCallerDigest } from '../sealing/sealed-caller';

/**
 * How long a task id handed out for a task without a lifetime (`ttlMs: null`) opens: a week.
 * The owner may keep such a task longer; the client's id for it then reads as unknown.
 */
export const UNBOUNDED_TASK_ID_MILLIS = 7 * 24 * 3600 * 1000;
/**
 * A short digest of where an upstream's task lives (its URL and registration, upstreamSource),
 * what a task id binds besides the upstream's id.
 */
export function urlDigest(source: string): string {
  return createHash('sha256').update(source).digest('base64url').slice(0, 16);
}

/** Slack over a task's `ttlMs` (clocks, the time the answer takes to reach the client). */
const TTL_SLACK_MILLIS = 60_000;

/**
 * Who runs a task: an upstream MCP server (its id and upstreamSource: an id registered again,
 * for another server or the same one, does not inherit the tasks), or this gateway (a bundle
 * tool's call).
 */
export type TaskOwner =
  | {
      readonly kind: 'upstream';
      readonly id: string;
      /** upstreamSource of the upstream: its URL, and its registration for a registered one. */
      readonly source: string;
      /** The published name of the tool whose call created the task. */
      readonly tool: string;
    }
  | GatewayTaskOwner;

/** A bundle tool's call the gateway runs: the tool and its bundle, what the caller's grant is checked against. */
export interface GatewayTaskOwner {
  readonly kind: 'gateway';
  readonly source: string;
  readonly tool: string;
}

/** An upstream's task: the upstream by id and URL digest, and the tool that created it. */
export interface UpstreamTaskOwner {
  readonly kind: 'upstream';
  readonly id: string;
  readonly urlDigest: string;
  /** The published tool name; undefined in an id sealed before it was (its source decides). */
  readonly tool?: string;
}

/**
 * Whether a grant may still use an upstream's task: the tool that created it, as the call
 * itself was checked (a grant of single tools, a virtual server of tool patterns), or the
 * whole source for an id that does not name the tool.
 */
export function mayUseUpstreamTask(
  access: CallerAccess | undefined,
  owner: UpstreamTaskOwner,
): boolean {
  if (access === undefined) return true;
  return owner.tool === undefined
    ? allowsSource(access, owner.id)
    : allowsTool(access, owner.id, owner.tool);
}

/** What a client's task id stands for: its owner (an upstream by id and URL digest, or the gateway). */
export interface OpenedTaskId {
  readonly owner: UpstreamTaskOwner | GatewayTaskOwner;
  /** The owner's own id of the task. */
  readonly taskId: string;
}

/**
 * The task ids clients see (docs/operations.md §10 "Tasks"): the owner's id, the owner and the
 * caller it was handed to, sealed (MrtrSeal, purpose `task-id`; every replica with the same
 * MCP_SESSION_KEYS opens it). So an upstream's ids never collide with another's, a client can
 * neither read nor forge another owner's id, and another caller's `tasks/get|update|cancel`
 * of it is answered exactly as an unknown id.
 */
@Injectable()
export class TaskIds {
  constructor(private readonly seal: MrtrSeal) {}

  /**
   * The client's id for `taskId`, opening until the task's `ttlMs` (plus a minute) has passed
   * since now, or for UNBOUNDED_TASK_ID_MILLIS when it has none.
   */
  handOut(
    owner: TaskOwner,
    taskId: string,
    caller: CallerIdentity | undefined,
    ttlMs: unknown,
    nowMs = Date.now(),
  ): string {
    const lifetime =
      typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs > 0
        ? Math.min(ttlMs + TTL_SLACK_MILLIS, UNBOUNDED_TASK_ID_MILLIS)
        : UNBOUNDED_TASK_ID_MILLIS;
    return this.seal.seal('task-id', {
      o: owner.kind === 'upstream' ? `u:${owner.id}` : 'g',
      ...(owner.kind === 'upstream'
        ? { u: urlDigest(owner.source), n: owner.tool }
        : { s: owner.source, n: owner.tool }),
      t: taskId,
      // the caller as requestState binds it (sub and client_id); `k`, not the `c` of ids sealed
      // by earlier builds (sub only), so such an id opens for nobody and is refused as unknown
      k: sealedCallerDigest(caller),
      exp: nowMs + lifetime,
    } as unknown as { exp: number });
  }

  /** What `token` stands for when this caller was handed it; undefined otherwise. */
  open(token: unknown, caller: CallerIdentity | undefined): OpenedTaskId | undefined {
    const payload = this.seal.open('task-id', token);
    if (payload === undefined || payload.k !== sealedCallerDigest(caller)) return undefined;
    const { o, t, u, s, n } = payload;
    if (typeof o !== 'string' || typeof t !== 'string') return undefined;
    if (o === 'g')
      return typeof s === 'string' && typeof n === 'string'
        ? { owner: { kind: 'gateway', source: s, tool: n }, taskId: t }
        : undefined;
    if (!o.startsWith('u:') || typeof u !== 'string') return undefined;
    return {
      owner: {
        kind: 'upstream',
        id: o.slice(2),
        urlDigest: u,
        ...(typeof n === 'string' && { tool: n }),
      },
      taskId: t,
    };
  }
}
