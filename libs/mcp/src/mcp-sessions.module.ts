import { Module } from '@nestjs/common';
import { IdentityModule } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { ServerCapabilities } from './servers/server-capabilities';
import { serverStoreProvider } from './servers/server-store';
import { VirtualServerRegistrations } from './servers/server-registrations.service';
import { VirtualServers } from './servers/virtual-servers.service';
import { EndedSessions } from './session/ended-sessions';
import { SessionLogLevels } from './session/session-log-levels';
import { sharedSessionStoreProvider } from './session/shared-session-store';
import { SessionTokenService } from './session/session-token.service';

const PROVIDERS = [
  SessionTokenService,
  SessionLogLevels,
  EndedSessions,
  sharedSessionStoreProvider,
  VirtualServers,
  serverStoreProvider,
  VirtualServerRegistrations,
  ServerCapabilities,
];

/**
 * What every part of the front door reads of whom it serves and as what
 * (docs/architecture.md "McpModule's parts"): the 2025 sessions (sealed ids, per-session values),
 * the virtual servers and their store, the capabilities offered.
 */
@Module({
  imports: [RegistryModule, IdentityModule],
  providers: PROVIDERS,
  exports: PROVIDERS,
})
export class McpSessionsModule {}
