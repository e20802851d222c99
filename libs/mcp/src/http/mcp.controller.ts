import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpAnswer } from '../answers/http-answer';
import { decodeBody, write } from './http-write';
import { McpExchanges } from './mcp-exchanges.service';

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
 * docs/benchmarks.md. Requests were admitted in `configureMcpFastify`'s onRequest hook
 * (Origin and Host, method: anything but POST is answered there); the body reaches it as raw
 * bytes (a catch-all buffer parser), decoded as strict UTF-8, so tool arguments are forwarded
 * byte for byte; McpExchanges runs and answers it exactly as on the node:http listener.
 * In a plain application context Nest registers no route for it.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly exchanges: McpExchanges) {}

  /** A virtual server's path (docs/operations.md §16): the same exchange, narrowed to its view. */
  @Post('servers/:server')
  postToServer(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    this.post(req, reply);
  }

  @Post()
  post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    const raw = req.body;
    const body = Buffer.isBuffer(raw) && raw.length > 0 ? decodeBody([raw], raw.length) : '';
    void reply.hijack();
    this.exchanges.serve(req.raw, reply.raw, body);
  }
}
