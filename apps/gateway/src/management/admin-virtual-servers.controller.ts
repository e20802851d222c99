import { Body, Controller, Delete, Get, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { VirtualServerRegistrations } from '@app/mcp';
import { AdminChange } from './admin-change';
import { AdminGate, idOf } from './admin-gate';

/**
 * Virtual servers registered at runtime (docs/operations.md §16 "Registered at runtime"), on the
 * management port with the registration API's access rules (§15 "Access"):
 * `GET /admin/servers` → `{servers}` (configured ones with `origin: "config"`, read-only),
 * `GET /admin/servers/{id}`, `POST /admin/servers` (the fields of an `mcp.virtualServers[]`
 * entry; 201, served at once), `PUT /admin/servers/{id}` (the whole server again),
 * `DELETE /admin/servers/{id}`. A registered server's answers carry `ETag: "<version>"`; PUT and
 * DELETE take an optional `If-Match` (409 when it changed since it was read). Every change
 * attempt is audit-logged.
 */
// `/admin/virtual-servers` too: the config key's name (mcp.virtualServers), as an operator may guess it
@Controller(['admin/servers', 'admin/virtual-servers'])
export class AdminVirtualServersController {
  constructor(
    private readonly registrations: VirtualServerRegistrations,
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
  @AdminChange('server.register')
  async register(
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const id = idOf(body);
    const actor = await this.gate.admit(req, reply, { action: 'server.register', upstreamId: id });
    if (actor === undefined) return;
    if (!this.gate.takesBody(req, reply, 'server.register', id, actor)) return;
    const outcome = await this.registrations.register(body, actor.name);
    this.gate.logChange('server.register', id, actor, outcome);
    this.gate.send(reply, outcome);
  }

  @Put(':id')
  @AdminChange('server.replace')
  async replace(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const actor = await this.gate.admit(req, reply, { action: 'server.replace', upstreamId: id });
    if (actor === undefined) return;
    if (!this.gate.takesBody(req, reply, 'server.replace', id, actor)) return;
    const ifMatch = this.gate.ifMatch(req, reply, 'server.replace', id, actor);
    if (ifMatch === null) return;
    const outcome = await this.registrations.replace(id, body, actor.name, ifMatch);
    this.gate.logChange('server.replace', id, actor, outcome);
    this.gate.send(reply, outcome);
  }

  @Delete(':id')
  @AdminChange('server.delete')
  async remove(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const actor = await this.gate.admit(req, reply, { action: 'server.delete', upstreamId: id });
    if (actor === undefined) return;
    const ifMatch = this.gate.ifMatch(req, reply, 'server.delete', id, actor);
    if (ifMatch === null) return;
    const outcome = await this.registrations.remove(id, ifMatch);
    this.gate.logChange('server.delete', id, actor, outcome);
    this.gate.send(reply, outcome);
  }
}
