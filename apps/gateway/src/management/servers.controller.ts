import { Controller, Get } from '@nestjs/common';
import { VirtualServers, type VirtualServerStatus } from '@app/mcp';

/** What GET /actuator/servers returns. */
export interface ServersView {
  readonly servers: readonly VirtualServerStatus[];
}

/**
 * GET /actuator/servers (docs/operations.md §16 "Virtual servers"): every virtual server with its
 * path, what its view names (sources, tool patterns, tags) and how many catalog tools it holds
 * now. Read-only, management port only.
 */
@Controller('actuator')
export class ServersController {
  constructor(private readonly servers: VirtualServers) {}

  @Get('servers')
  list(): ServersView {
    return { servers: this.servers.statuses() };
  }
}
