import { Module } from '@nestjs/common';
import { UpstreamConnections } from './upstream-connections.service';

/** UpstreamModule: the gateway's MCP client connections to upstream servers (issue 10 §2). */
@Module({
  providers: [UpstreamConnections],
  exports: [UpstreamConnections],
})
export class UpstreamModule {}
