import { Body, Controller, Delete, Get, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UpstreamRegistrations } from '../admin/upstream-registrations.service';
import { AdminChange } from './admin-change';
import { AdminGate, idOf } from './admin-gate';

/**
 * The registration API (docs/operations.md §15), on the management port only:
 * `GET /admin/upstreams` → `{storage, upstreams}` (configured ones first, `origin: "config"`,
 * read-only), `GET /admin/upstreams/{id}`, `POST /admin/upstreams` (the fields of an
 * `mcp.upstreams[]` entry; 202 with the record PENDING), `PATCH /admin/upstreams/{id}`
 * (`{enabled}`), `DELETE /admin/upstreams/{id}`.
 *
 * Access: with an admin check configured (JWT with `mcp.admin.scope`, or `MCP_ADMIN_TOKEN`)
 * every route needs `Authorization: Bearer …` (401 without a valid one, 403 without the
 * scope); with none, reads are open and writes answer 403. Errors are
 * `{statusCode, error, message, problems?}`, `problems` naming each field. Every write
 * attempt is audit-logged.
 *
 * A registered record's answers carry `ETag: "<version>"`; PATCH and DELETE take an optional
 * `If-Match` (409 when the stored record is another version: it changed since it was read).
 */
@Controller('admin/upstreams')
export class AdminUpstreamsController {
  constructor(
    private readonly registrations: UpstreamRegistrations,
    private readonly gate: AdminGate,
  ) {}

  @Get()
  async list(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if ((await this.gate.admit(req, reply)) === undefined) return;
    void reply.status(200).send(this.registrations.list());
  }

  @Get(':id')
  async one(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if ((await this.gate.admit(req, reply)) === undefined) return;
    this.gate.send(reply, this.registrations.get(id));
  }

  @Post()
  @AdminChange('upstream.register')
  async register(
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const id = idOf(body);
    const actor = await this.gate.admit(req, reply, {
      action: 'upstream.register',
      upstreamId: id,
    });
    if (actor === undefined) return;
    if (!this.gate.takesBody(req, reply, 'upstream.register', id, actor)) return;
    const outcome = await this.registrations.register(body, actor);
    this.gate.logChange('upstream.register', id, actor, outcome, `url ${urlOf(body)}`);
    this.gate.send(reply, outcome);
  }

  @Patch(':id')
  @AdminChange('upstream.update')
  async update(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const actor = await this.gate.admit(req, reply, { action: 'upstream.update', upstreamId: id });
    if (actor === undefined) return;
    if (!this.gate.takesBody(req, reply, 'upstream.update', id, actor)) return;
    const ifMatch = this.gate.ifMatch(req, reply, 'upstream.update', id, actor);
    if (ifMatch === null) return;
    const outcome = await this.registrations.update(id, body, actor, ifMatch);
    this.gate.logChange('upstream.update', id, actor, outcome, changeOf(body));
    this.gate.send(reply, outcome);
  }

  @Delete(':id')
  @AdminChange('upstream.delete')
  async remove(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const actor = await this.gate.admit(req, reply, { action: 'upstream.delete', upstreamId: id });
    if (actor === undefined) return;
    const ifMatch = this.gate.ifMatch(req, reply, 'upstream.delete', id, actor);
    if (ifMatch === null) return;
    const outcome = await this.registrations.remove(id, ifMatch);
    this.gate.logChange('upstream.delete', id, actor, outcome);
    this.gate.send(reply, outcome);
  }
}

/** The URL for the audit line, without credentials or query (never a secret in a log). */
function urlOf(body: unknown): string {
  const url = (body as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') return '?';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '?';
  }
}

/** The change for the audit line: the body as JSON, at most 200 characters. */
function changeOf(body: unknown): string {
  try {
    return JSON.stringify(body ?? null).slice(0, 200);
  } catch {
    // nested too deep for JSON.stringify (the refusal says so)
    return '(not shown)';
  }
}

export { parseIfMatch } from './admin-gate';
