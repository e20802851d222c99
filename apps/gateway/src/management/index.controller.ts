import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/** What `GET /` names: where an operator who opened the management port in a browser goes next. */
const INDEX_TEXT = [
  'mcp-gateway management port (docs/operations.md §12):',
  '  /console                      the operator console',
  '  /actuator/health/readiness    readiness (liveness: /actuator/health/liveness)',
  '  /actuator/toolBundles         bundle status; /actuator/upstreams for upstream MCP servers',
  '  /actuator/prometheus          metrics',
  '  /admin/upstreams              runtime registrations',
  '',
].join('\n');

/**
 * GET / on the management port: a redirect to the console (a browser lands on it), with the
 * endpoints in the body for a client that does not follow redirects (curl).
 */
@Controller()
export class ManagementIndexController {
  @Get()
  index(@Res() reply: FastifyReply): void {
    void reply
      .code(302)
      .header('location', '/console')
      .header('content-type', 'text/plain; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(INDEX_TEXT);
  }
}
