import { STATUS_CODES } from 'node:http';
import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/** An error fastify raised itself (a body it could not read: not JSON, too large, an unsupported type). */
interface FastifyClientError {
  readonly statusCode: number;
  readonly message: string;
}

function isFastifyClientError(error: unknown): error is FastifyClientError {
  const e = error as Partial<FastifyClientError & { code: unknown }> | null;
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
 * `{statusCode, error, message}`, the shape `/admin` documents (docs/operations.md §15).
 */
@Catch()
export class ManagementErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Management');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      void reply
        .status(exception.getStatus())
        .send(typeof body === 'string' ? shaped(exception.getStatus(), body) : body);
      return;
    }
    if (isFastifyClientError(exception)) {
      void reply.status(exception.statusCode).send(shaped(exception.statusCode, exception.message));
      return;
    }
    this.logger.error(
      `Unexpected error on the management port (${exception instanceof Error ? exception.name : typeof exception})`,
    );
    void reply.status(500).send(shaped(500, 'Internal server error'));
  }
}

function shaped(statusCode: number, message: string): Record<string, unknown> {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}
