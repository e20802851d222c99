import { STATUS_CODES } from 'node:http';
import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lingeringClose } from '@app/http-body';
import { AdminAuditLog } from '../admin/admin-audit-log';
import { adminChangeOf } from './admin-change';

/** An error fastify raised itself (a body it could not read: not JSON, too large, an unsupported type). */
interface FastifyClientError {
  readonly statusCode: number;
  readonly message: string;
  readonly code: string;
}

function isFastifyClientError(error: unknown): error is FastifyClientError {
  const e = error as Partial<Record<keyof FastifyClientError, unknown>> | null;
  return (
    typeof e?.statusCode === 'number' &&
    e.statusCode >= 400 &&
    e.statusCode < 500 &&
    typeof e.message === 'string' &&
    typeof e.code === 'string' &&
    e.code.startsWith('FST_')
  );
}

/**
 * The error answers of the management port: Nest's HttpExceptions as they are (the readiness
 * 503 keeps its Terminus body), fastify's own 4xx (a body that is not JSON, over the size
 * limit, of a type no parser reads) and anything unexpected (500, logged) as
 * `{statusCode, error, message}`, the shape `/admin` documents (docs/operations.md §15). A
 * change to any /admin route refused this early is audit-logged like any other attempt
 * (no actor: the token was not looked at yet); a 413 ends with a lingering close.
 */
@Catch()
export class ManagementErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Management');

  constructor(private readonly audit: AdminAuditLog) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    let status: number;
    let body: unknown;
    if (exception instanceof HttpException) {
      status = exception.getStatus();
      const response = exception.getResponse();
      body = typeof response === 'string' ? shaped(status, response) : response;
    } else if (isFastifyClientError(exception)) {
      status = exception.statusCode;
      body = shaped(status, exception.message);
    } else {
      this.logger.error(
        `Unexpected error on the management port (${exception instanceof Error ? exception.name : typeof exception})`,
      );
      status = 500;
      body = shaped(500, 'Internal server error');
    }
    // the /admin routes answer their own refusals (and audit them); what reaches this filter
    // for a change was refused before the route ran: audited under the action of the route
    // fastify matched (admin-change.ts), with no actor, no id and no text of the caller's (the
    // parser's message may quote the body), docs/operations.md §15 "Access"
    const req = http.getRequest<FastifyRequest>();
    const action = adminChangeOf(req);
    if (action !== undefined)
      this.audit.record({
        action,
        upstreamId: null,
        actor: null,
        status,
        outcome: 'refused',
        detail: `refused before the route ran: ${codeOf(exception) ?? STATUS_CODES[status] ?? status}`,
      });
    if (status === 413) {
      // the body is left unread: written on the socket, then a lingering close, so a client
      // still sending it reads the 413 instead of a reset (docs/security.md "The management port")
      void reply.hijack();
      lingeringClose(req.raw, {
        status,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        },
        body: JSON.stringify(body),
      });
      return;
    }
    void reply.status(status).send(body);
  }
}

function shaped(statusCode: number, message: string): Record<string, unknown> {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

/** fastify's code of an error it raised itself (`FST_ERR_CTP_INVALID_MEDIA_TYPE`…): fixed text. */
function codeOf(exception: unknown): string | undefined {
  return isFastifyClientError(exception) ? exception.code : undefined;
}
