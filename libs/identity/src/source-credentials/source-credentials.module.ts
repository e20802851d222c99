import { Module } from '@nestjs/common';
import { SourceCredentials } from './source-credentials.service';

/**
 * One SourceCredentials (and its token cache) shared by execution and discovery
 * (docs/operations.md §14 "Credentials towards sources").
 */
@Module({
  providers: [{ provide: SourceCredentials, useFactory: () => new SourceCredentials() }],
  exports: [SourceCredentials],
})
export class SourceCredentialsModule {}
