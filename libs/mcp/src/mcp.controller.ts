import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { runWithCallContext } from '@app/observability';
import { header, type HttpAnswer } from './http/http-answer';
import { McpTransport } from './mcp-transport.service';

/** Strict UTF-8: invalid bytes are a parse error, never silently replaced (contract §10). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeBody(body: unknown): string | null {
  if (!(body instanceof Buffer)) return '';
  try {
    return UTF8.decode(body);
  } catch {
    return null;
  }
}

function send(reply: FastifyReply, answer: HttpAnswer): void {
  reply.code(answer.status).headers(answer.headers);
  if (answer.body === undefined) reply.send();
  else reply.send(answer.body);
}

/**
 * POST /mcp for agents, on PORT. Raw-body, no pipes or interceptors: the transport and
 * codecs decide everything, so the hot path stays lean (DESIGN).
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly transport: McpTransport) {}

  @Post()
  async post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = decodeBody(req.body);
    // Every log line written while this call is served carries its correlation ids.
    const context = {
      requestId: header(req.headers, 'x-request-id'),
      guid: header(req.headers, 'guid'),
    };
    send(
      reply,
      await runWithCallContext(context, () => this.transport.post({ headers: req.headers, body })),
    );
  }

  /** No standalone SSE stream (2025 transport: 405 when not offered). */
  @Get()
  get(@Res() reply: FastifyReply): void {
    send(reply, this.transport.methodNotAllowed());
  }

  /** Sessions are sealed tokens with nothing to delete server-side (2025 transport: MAY answer 405). */
  @Delete()
  delete(@Res() reply: FastifyReply): void {
    send(reply, this.transport.methodNotAllowed());
  }
}
