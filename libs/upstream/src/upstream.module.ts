import { Module } from '@nestjs/common';
import { SourceCredentialsModule } from '@app/identity';
import { UpstreamConnections } from './upstream-connections.service';

/**
 * UpstreamModule: the gateway's MCP client connections to upstream servers
 * (docs/operations.md §10 "Eras").
 */
@Module({
  imports: [SourceCredentialsModule],
  providers: [UpstreamConnections],
  exports: [UpstreamConnections],
})
export class UpstreamModule {}
