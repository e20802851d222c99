import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { openRedis, redisUseOptions } from '@app/redis';
import { RegistryModule } from '@app/registry';
import { UpstreamModule } from '@app/upstream';
import { MemoryRegistrationStore } from './registration-store';
import { RedisRegistrationStore } from './redis-registration-store';
import { RegistrationSync } from './registration-sync.service';
import { REGISTRATION_STORE, UPSTREAM_ADDRESS_GUARD } from './registration-tokens';
import { UpstreamAddressGuard } from './upstream-address-guard';

/**
 * RegistrationsModule (docs/operations.md §15): the store of runtime-registered upstream MCP
 * servers (Redis when one is configured, else this process's memory), the address guard every
 * write and every read record passes, and RegistrationSync, which applies the store to the
 * registry. DiscoveryModule reads the store on its timetable; AdminModule writes to it.
 */
@Module({
  imports: [RegistryModule, UpstreamModule],
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
    RegistrationSync,
  ],
  exports: [RegistrationSync],
})
export class RegistrationsModule {}
