import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorEnvelope } from './http-answer';
import { MCP_MAX_BODY_BYTES } from '../raw-body';

/**
 * The agent-facing application's last line: errors that escape before or around the /mcp
 * handler (an oversized body refused while it streams in, an unknown path, a crash) are
 * still answered as JSON-RPC errors without internals. Runs only on errors, never on the
 * hot path.
 */
@Catch()
export class McpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Mcp');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const status =
      exception instanceof HttpException
        ? exception.getStatus()
        : typeof (exception as { statusCode?: unknown })?.statusCode === 'number'
          ? (exception as { statusCode: number }).statusCode
          : 500;
    let code = -32000;
    let message: string;
    if (status === 413) {
      message = `Payload Too Large: the body exceeds ${MCP_MAX_BODY_BYTES} bytes`;
    } else if (status === 404) {
      message = 'Not Found: the MCP endpoint is POST /mcp';
    } else if (status >= 400 && status < 500) {
      message = 'Bad Request';
    } else {
      code = -32603;
      message = 'Internal error';
      this.logger.error(
        `Unhandled error on /mcp: ${exception instanceof Error ? (exception.stack ?? exception.name) : typeof exception}`,
      );
    }
    void reply
      .code(status)
      .header('content-type', 'application/json; charset=utf-8')
      .send(errorEnvelope(null, code, message));
  }
}
