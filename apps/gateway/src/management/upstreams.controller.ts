import { Controller, Get } from '@nestjs/common';
import { RegistryService, type UpstreamsView } from '@app/registry';

/**
 * GET /actuator/upstreams (docs/operations.md §10 "GET /actuator/upstreams"): every configured
 * upstream MCP server with its `status` (`healthy`, `degraded`: serving a last good copy after a
 * failed pull, `unreachable`: never answered, `disabled`), era, counts per list, left-out items
 * with the reason, last attempt and success times and the last error type. Never a URL, header or
 * token. Read-only, management port only.
 */
@Controller('actuator')
export class UpstreamsController {
  constructor(private readonly registry: RegistryService) {}

  @Get('upstreams')
  upstreams(): UpstreamsView {
    return this.registry.upstreamsView();
  }
}
