import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpTransport } from '../mcp-transport.service';
import type { HttpAnswer } from './http-answer';
import { decodeBody, write } from './mcp-http-server';

/**
 * Sends an answer through fastify: a whole body with reply.send (fastify sets the length),
 * a body in parts (tools/list, bytes built once per catalog) written part by part on the raw
 * response, never joined.
 */
export function sendAnswer(reply: FastifyReply, answer: HttpAnswer): void {
  if (answer.body === undefined || typeof answer.body === 'string') {
    void reply.code(answer.status).headers(answer.headers).send(answer.body);
    return;
  }
  void reply.hijack();
  write(reply.raw, answer);
}

/**
 * `/mcp` as a Nest controller on the fastify adapter: the default listener
 * (`MCP_HTTP_SERVER=fastify`), measured against the opt-in `McpHttpServer` on node:http in
 * docs/benchmarks.md. Same transport, codec and handlers; the body reaches it as the raw bytes
 * (a catch-all buffer parser, see `configureMcpFastify`), decoded as strict UTF-8 like on the
 * default path, so tool arguments are forwarded byte for byte.
 * In a plain application context (the default) Nest registers no route for it.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly transport: McpTransport) {}

  @Post()
  async post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const raw = req.body;
    const body = Buffer.isBuffer(raw) && raw.length > 0 ? decodeBody([raw], raw.length) : '';
    sendAnswer(reply, await this.transport.post({ headers: req.headers, body }));
  }

  /** GET (a standalone SSE stream) is not offered: 405 (2025 transport). */
  @Get()
  get(@Res() reply: FastifyReply): void {
    sendAnswer(reply, this.transport.methodNotAllowed());
  }

  /** DELETE (end a session) is not offered: 405 (2025 transport). */
  @Delete()
  delete(@Res() reply: FastifyReply): void {
    sendAnswer(reply, this.transport.methodNotAllowed());
  }
}
