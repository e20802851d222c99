import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseMediaType } from '@app/http-body';
import { AdminAuditLog, type AdminAction } from '../admin/admin-audit-log';
import { AdminAuthenticator, type AdminActor } from '../admin/admin-authenticator';
import {
  MAX_BODY_DEPTH,
  nestedDeeperThan,
  type AdminOutcome,
  type AdminRefusalReason,
} from '../admin/registration-views';
import type { IfMatch } from '../admin/upstream-registrations.service';

/** Each reason an admin request is refused for, as HTTP: the one place they meet. */
const ADMIN_REFUSAL_STATUS: Readonly<Record<AdminRefusalReason, 400 | 404 | 409 | 415 | 503>> = {
  invalid: 400,
  notFound: 404,
  conflict: 409,
  unsupportedMediaType: 415,
  unavailable: 503,
};

/** The HTTP status of an admin outcome: a success's own (200, 202), a refusal's by its reason. */
export function statusOf(outcome: AdminOutcome<unknown>): number {
  return outcome.ok ? outcome.status : ADMIN_REFUSAL_STATUS[outcome.reason];
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  415: 'Unsupported Media Type',
  503: 'Service Unavailable',
};

/**
 * What every /admin route does around its work (docs/operations.md §15 "Access"): the admin
 * check, the JSON-only rule for changes, the audit line of each change attempt, and the answer
 * of an outcome (a success's body, a refusal as `{statusCode, error, message, problems?}`).
 */
export class AdminGate {
  constructor(
    private readonly authenticator: AdminAuthenticator,
    private readonly audit: AdminAuditLog,
  ) {}

  /**
   * The admin check (docs/operations.md §15 "Access"); answers the refusal itself and returns
   * undefined, or returns who is calling. `write` set: a change, refused when no admin check is
   * configured.
   */
  async admit(
    req: FastifyRequest,
    reply: FastifyReply,
    write?: { action: AdminAction; upstreamId: string | null },
  ): Promise<AdminActor | undefined> {
    const decision = await this.authenticator.authenticate(req.headers.authorization);
    const deny = (
      status: 401 | 403 | 503,
      message: string,
      actor: AdminActor | null,
      retryAfterSeconds?: number,
    ): undefined => {
      // Without an actor (no valid credential, or none configured) the id is the text of an
      // anonymous caller: never logged, whatever the status (docs/operations.md §15 "Access").
      if (write !== undefined)
        this.audit.record({
          ...write,
          upstreamId: actor === null ? null : write.upstreamId,
          actor,
          status,
          outcome: 'denied',
          detail: message,
        });
      if (status === 401) void reply.header('www-authenticate', 'Bearer realm="mcp-gateway-admin"');
      if (retryAfterSeconds !== undefined)
        void reply.header('retry-after', String(retryAfterSeconds));
      void reply.status(status).send({ statusCode: status, error: STATUS_TEXT[status], message });
      return undefined;
    };
    switch (decision.kind) {
      case 'admin':
        return decision.actor;
      case 'unconfigured':
        if (write === undefined) return decision.actor;
        return deny(
          403,
          'The /admin API is read-only: no admin credential is configured. Set MCP_ADMIN_TOKEN ' +
            '(sent as "Authorization: Bearer …"), or use mcp.auth.mode jwt with tokens carrying mcp.admin.scope',
          null,
        );
      case 'unauthenticated':
        return deny(401, decision.reason, null);
      case 'forbidden':
        return deny(403, decision.reason, decision.actor);
      case 'unavailable':
        // the token was not found bad: the client keeps it and retries (docs/security.md)
        return deny(503, decision.reason, null, decision.retryAfterSeconds);
    }
  }

  /**
   * The `If-Match` header (RFC 9110 §13.1.1) of a change: undefined when absent, `*`, or the
   * versions of its strong entity tags (a weak tag never matches). A malformed one is a 400
   * (answered and logged; null).
   */
  ifMatch(
    req: FastifyRequest,
    reply: FastifyReply,
    action: AdminAction,
    id: string,
    actor: AdminActor,
  ): IfMatch | undefined | null {
    const raw = req.headers['if-match'];
    if (raw === undefined) return undefined;
    const parsed = parseIfMatch(Array.isArray(raw) ? raw.join(',') : raw);
    if (parsed !== undefined) return parsed;
    const outcome = {
      ok: false,
      reason: 'invalid',
      message: 'If-Match is not valid',
      problems: ['If-Match: must be "*" or the ETag of the record (e.g. "12")'],
    } as const;
    this.logChange(action, id, actor, outcome);
    this.send(reply, outcome);
    return null;
  }

  /**
   * The rules of every change's body (docs/operations.md §15 "Access"): JSON (415 otherwise),
   * nested at most MAX_BODY_DEPTH levels (400 otherwise: no route's validation walks a body
   * deeper than its fields go). A refusal is answered and audit-logged; false.
   */
  takesBody(
    req: FastifyRequest,
    reply: FastifyReply,
    action: AdminAction,
    upstreamId: string | null,
    actor: AdminActor,
  ): boolean {
    const outcome = !isJson(req)
      ? ({
          ok: false,
          reason: 'unsupportedMediaType',
          message: 'Send the body as JSON (Content-Type: application/json)',
        } as const)
      : nestedDeeperThan(req.body, MAX_BODY_DEPTH)
        ? ({
            ok: false,
            reason: 'invalid',
            message: 'The body is not valid',
            problems: [`the body is nested deeper than ${MAX_BODY_DEPTH} levels`],
          } as const)
        : undefined;
    if (outcome === undefined) return true;
    this.logChange(action, upstreamId, actor, outcome);
    this.send(reply, outcome);
    return false;
  }

  logChange(
    action: AdminAction,
    upstreamId: string | null,
    actor: AdminActor,
    outcome: AdminOutcome<unknown>,
    detail?: string,
  ): void {
    this.audit.record({
      action,
      upstreamId,
      actor,
      status: statusOf(outcome),
      outcome: outcome.ok ? 'accepted' : 'refused',
      detail: outcome.ok ? detail : (outcome.problems?.[0] ?? outcome.message),
    });
  }

  send<T>(reply: FastifyReply, outcome: AdminOutcome<T>): void {
    if (outcome.ok) {
      if (outcome.version !== undefined) void reply.header('etag', `"${outcome.version}"`);
      void reply.status(outcome.status).send(outcome.body);
      return;
    }
    const status = statusOf(outcome);
    void reply.status(status).send({
      statusCode: status,
      error: STATUS_TEXT[status],
      message: outcome.message,
      ...(outcome.problems === undefined ? {} : { problems: outcome.problems }),
    });
  }
}

function isJson(req: FastifyRequest): boolean {
  return parseMediaType(req.headers['content-type'] ?? '').essence === 'application/json';
}

/** `*`, or the versions of the strong entity tags of a list; undefined when malformed. */
export function parseIfMatch(value: string): IfMatch | undefined {
  const text = value.trim();
  if (text === '*') return '*';
  const versions: number[] = [];
  for (const item of text.split(',')) {
    const tag = item.trim();
    if (tag === '') continue;
    const m = /^(W\/)?"([\x21\x23-\x7e]*)"$/.exec(tag);
    if (m === null) return undefined;
    // a weak tag never matches (strong comparison), and neither does a tag that is not a
    // version as the port writes one: strong comparison is of the characters (RFC 9110 §8.8.3.2),
    // so "07" is not "7"
    if (m[1] === undefined && /^(0|[1-9][0-9]{0,14})$/.test(m[2] ?? ''))
      versions.push(Number(m[2]));
  }
  return versions.length === 0 && !text.includes('"') ? undefined : versions;
}

/** The `id` of a change's body, for its audit line (at most 64 characters); null without one. */
export function idOf(body: unknown): string | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id.slice(0, 64) : null;
}
