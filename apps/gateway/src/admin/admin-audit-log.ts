import { Injectable, Logger } from '@nestjs/common';
import type { AdminActor } from './admin-authenticator';

/** What an admin request tried to do. */
export type AdminAction =
  | 'upstream.register'
  | 'upstream.update'
  | 'upstream.delete'
  /** approvals of pinned tool definitions: `upstreamId` names the source, bundle or upstream */
  | 'tools.approve'
  /** virtual servers registered at runtime: `upstreamId` names the server */
  | 'server.register'
  | 'server.replace'
  | 'server.delete';

/** One audit entry: who, what, on which upstream, and how it ended. */
export interface AdminAuditEntry {
  readonly action: AdminAction;
  readonly upstreamId: string | null;
  readonly actor: AdminActor | null;
  /** The HTTP status answered. */
  readonly status: number;
  readonly outcome: 'accepted' | 'refused' | 'denied';
  /** The changed fields, or the first problem of a refusal; never a secret. */
  readonly detail?: string;
}

/** The longest `detail` an audit line carries: a request's text must not set a line's size. */
const MAX_DETAIL_LENGTH = 512;

function bounded(detail: string): string {
  return detail.length <= MAX_DETAIL_LENGTH ? detail : `${detail.slice(0, MAX_DETAIL_LENGTH)}…`;
}

/**
 * The audit trail of /admin (docs/operations.md §15 "Access"): one JSON log line per change
 * attempt, written through the gateway's pino logger with `event: "admin_audit"`, naming who made
 * it. Denied attempts (401, 403) are logged too, with no actor when the token did not verify.
 */
@Injectable()
export class AdminAuditLog {
  private readonly logger = new Logger('Audit');

  record(entry: AdminAuditEntry): void {
    const who =
      entry.actor === null ? 'unauthenticated caller' : `${entry.actor.name} (${entry.actor.via})`;
    this.logger.log({
      msg: `Admin ${entry.action} ${entry.upstreamId ?? ''} by ${who}: ${entry.outcome} (${entry.status})`,
      event: 'admin_audit',
      action: entry.action,
      upstreamId: entry.upstreamId,
      actor: entry.actor?.name ?? null,
      actorVia: entry.actor?.via ?? null,
      status: entry.status,
      outcome: entry.outcome,
      ...(entry.detail === undefined ? {} : { detail: bounded(entry.detail) }),
    });
  }
}
