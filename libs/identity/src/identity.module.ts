import { Module } from '@nestjs/common';
import { ResourceServer } from './resource-server.service';

/** IdentityModule: the /mcp resource server and access policy (docs/operations.md §13). */
@Module({
  providers: [ResourceServer],
  exports: [ResourceServer],
})
export class IdentityModule {}
