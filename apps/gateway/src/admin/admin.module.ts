import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { DiscoveryModule } from '@app/discovery';
import { IdentityModule, ResourceServer } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { openRedis, redisUseOptions } from '@app/redis';
import { UpstreamModule } from '@app/upstream';
import { AdminAuditLog } from './admin-audit-log';
import { ADMIN_BEARER_VERIFIER, AdminAuthenticator } from './admin-authenticator';
import { REGISTRATION_STORE, UPSTREAM_ADDRESS_GUARD } from './admin-tokens';
import { adminVerifierFrom } from './resource-server-verifier';
import { MemoryRegistrationStore } from './registration-store';
import { RedisRegistrationStore } from './redis-registration-store';
import { UpstreamAddressGuard } from './upstream-address-guard';
import { UpstreamRegistrations } from './upstream-registrations.service';

/**
 * AdminModule (docs/operations.md §15): runtime registration of upstream MCP servers, its store
 * (Redis or memory), the admin role check and the audit log. It lives in the main
 * application context, beside the registry it feeds, so registrations are loaded before the
 * first refresh round; the management listener serves its HTTP face (/admin).
 */
@Module({
  imports: [RegistryModule, DiscoveryModule, UpstreamModule, IdentityModule],
  providers: [
    {
      provide: REGISTRATION_STORE,
      useFactory: async (config: GatewayConfig) => {
        if (config.redisServer === undefined) return new MemoryRegistrationStore();
        const client = await openRedis(
          config.redisServer,
          redisUseOptions('registrations', config.mcp.redis),
        );
        return new RedisRegistrationStore(client, config);
      },
      inject: [GATEWAY_CONFIG],
    },
    {
      provide: UPSTREAM_ADDRESS_GUARD,
      useFactory: (config: GatewayConfig) =>
        new UpstreamAddressGuard(
          config.admin ?? { urlPatterns: [], allowLoopback: false, allowedRanges: [] },
        ),
      inject: [GATEWAY_CONFIG],
    },
    // with mcp.auth.mode jwt, an admin is a verified token carrying mcp.admin.scope
    // (docs/operations.md §15 "Access")
    { provide: ADMIN_BEARER_VERIFIER, useFactory: adminVerifierFrom, inject: [ResourceServer] },
    AdminAuthenticator,
    AdminAuditLog,
    UpstreamRegistrations,
  ],
  exports: [AdminAuthenticator, AdminAuditLog, UpstreamRegistrations],
})
export class AdminModule {}
