import { Module } from '@nestjs/common';
import { ResourceServer } from './resource-server.service';

/** IdentityModule: the /mcp resource server and access policy (issue 12 §1–§3). */
@Module({
  providers: [ResourceServer],
  exports: [ResourceServer],
})
export class IdentityModule {}
