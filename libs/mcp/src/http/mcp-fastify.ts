import { createServer, type RequestListener } from 'node:http';
import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendAnswer } from './mcp.controller';
import { drainListener, trackConnections } from './drain-listener';
import { plainError } from './http-write';
import { McpExchanges } from './mcp-exchanges.service';
import { readMcpBody } from './read-body';
import {
  answerClientError,
  MCP_MAX_BODY_BYTES,
  MCP_SERVER_OPTIONS,
  notFound,
  refuseTooLarge,
} from './listener-limits';

/** The same limits as McpHttpServer (body, request and keep-alive timeouts). */
export function mcpFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: MCP_MAX_BODY_BYTES,
    requestTimeout: MCP_SERVER_OPTIONS.requestTimeout,
    keepAliveTimeout: MCP_SERVER_OPTIONS.keepAliveTimeout,
    serverFactory: (handler: RequestListener) => createServer(MCP_SERVER_OPTIONS, handler),
    // as the node:http listener answers them (fastify's own answer has a JSON body of its own)
    clientErrorHandler: answerClientError,
  });
}

/** Node's error for a request body that ended because the client closed the connection. */
function clientWentAway(exception: unknown): boolean {
  const { code, message } = (exception ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' || message === 'aborted';
}

function statusOf(exception: unknown): number {
  if (exception instanceof HttpException) return exception.getStatus();
  const code = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : 500;
}

/**
 * Maps what fastify and Nest answer on their own (no route, body too large, a fault) to the
 * answers McpHttpServer gives: 404 outside /mcp, 405 for other methods on /mcp, 413 with
 * `connection: close`, 500 without details.
 */
@Catch()
export class McpTransportExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Mcp');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const status = statusOf(exception);
    const path = req.url.split('?', 1)[0];
    if (status === 404 && path === '/mcp') {
      sendAnswer(reply, plainError(405, 'Method Not Allowed: use POST', { allow: 'POST' }));
    } else if (status === 404) {
      sendAnswer(reply, notFound(path));
    } else if (status === 413) {
      // written on the socket, then a lingering close (refuseTooLarge): fastify sends nothing
      void reply.hijack();
      refuseTooLarge(req.raw);
    } else if (clientWentAway(exception)) {
      // the client closed the connection while its body was being read: nobody to answer
      reply.raw.destroy();
    } else {
      this.logger.error(
        `Unhandled error on /mcp: ${exception instanceof Error ? (exception.stack ?? exception.name) : typeof exception}`,
      );
      sendAnswer(reply, plainError(500, 'Internal error'));
    }
  }
}

/**
 * Prepares a Nest fastify application for McpController (create it with `bodyParser: false`):
 * every body is kept as its raw bytes (no JSON parse by fastify), the framework's own answers
 * take the /mcp forms, and once `drain` starts, requests still arriving get 503 like on the
 * default listener. Returns the drain function (same contract as McpHttpServer.drain).
 */
export function configureMcpFastify(
  app: NestFastifyApplication,
): (graceMs: number) => Promise<boolean> {
  const instance = app.getHttpAdapter().getInstance();
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', (_req, payload, done) => readMcpBody(payload, done));
  const exchanges = app.get(McpExchanges);
  trackConnections(app.getHttpServer());
  let draining = false;
  instance.addHook('onRequest', (req, reply, done) => {
    // The same routing, drain and admission as on the node:http listener, before the body is
    // read (McpExchanges.front): the path is the raw request target, exactly "/mcp", where
    // fastify's router would also route "/%6dcp" or an absolute-form target.
    if (exchanges.front(req.raw, reply.raw, draining)) {
      // admitted: its token is checked before the body is read; one that may be served goes on
      // (body, route) and McpController answers on the raw response, a refused one is answered
      // on the raw response
      exchanges.authenticateFirst(
        req.raw,
        reply.raw,
        () => done(),
        () => void reply.hijack(),
      );
      return;
    }
    void reply.hijack(); // answered on the raw response
  });
  app.useGlobalFilters(new McpTransportExceptionFilter());
  return (graceMs) => {
    draining = true;
    exchanges.endStreams();
    return drainListener(app.getHttpServer(), graceMs, () => exchanges.abandonInFlight());
  };
}
