import type { MrtrSeal } from '../sealing/mrtr-seal';
import type { TaskRecord, TaskStatus } from './task-store';

const STATUSES: ReadonlySet<unknown> = new Set<TaskStatus>([
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
]);

/**
 * A task's record as kept in Redis: `<status> <sealed record>`. The status stands in the clear
 * for the store's compare-and-set script (an ended task never changes again), the record is
 * sealed with MCP_SESSION_KEYS (MrtrSeal, purpose `task-record`), so that whoever else can write
 * to that Redis cannot put a result, an error or another task's record in its place, nor read
 * one (docs/security.md "Records in Redis").
 */
export function sealTaskRecord(seal: MrtrSeal, record: TaskRecord, expiresAtMs: number): string {
  return `${record.status} ${seal.seal('task-record', { ...record, exp: expiresAtMs })}`;
}

/**
 * The record kept under `taskId`; undefined when the value is not one this gateway sealed for that
 * task (garbage, a record of an earlier build, a forgery, another task's record, one sealed with
 * a retired key) or it expired.
 */
export function openTaskRecord(
  seal: MrtrSeal,
  taskId: string,
  stored: string,
  maxChars: number,
): TaskRecord | undefined {
  const space = stored.indexOf(' ');
  if (space < 0) return undefined;
  const payload = seal.open('task-record', stored.slice(space + 1), Date.now(), maxChars);
  if (payload === undefined || payload.taskId !== taskId || !isTaskRecord(payload))
    return undefined;
  const { exp: _exp, ...record } = payload;
  return record as unknown as TaskRecord;
}

function isTaskRecord(value: Record<string, unknown>): boolean {
  const optional = (v: unknown, type: string): boolean => v === undefined || typeof v === type;
  const error = value.error as { code?: unknown; message?: unknown } | undefined;
  return (
    STATUSES.has(value.status) &&
    typeof value.createdAt === 'string' &&
    typeof value.lastUpdatedAt === 'string' &&
    typeof value.ttlMs === 'number' &&
    typeof value.pollIntervalMs === 'number' &&
    typeof value.runner === 'string' &&
    typeof value.leaseUntil === 'number' &&
    typeof value.owner === 'string' &&
    optional(value.caller, 'string') &&
    optional(value.statusMessage, 'string') &&
    (value.result === undefined || (typeof value.result === 'object' && value.result !== null)) &&
    (error === undefined ||
      (typeof error === 'object' &&
        error !== null &&
        typeof error.code === 'number' &&
        typeof error.message === 'string'))
  );
}
