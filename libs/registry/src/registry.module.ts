import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics } from '@app/observability';
import { openRedis, redisUseOptions } from '@app/redis';
import { ArgumentValidators } from './catalog/argument-validators';
import { Clock } from './clock';
import { PIN_STORE, RedisPinStore } from './pins/pin-store';
import { PinnedTools } from './pins/pinned-tools.service';
import { LAST_GOOD_STORE } from './redis/last-good-store';
import { RedisLastGoodStore } from './redis/redis-last-good.store';
import { RegistryService } from './registry.service';
import { UpstreamIntake } from './upstream/upstream-intake';

/** RegistryModule: validation, merge rules, last-good copies (memory and Redis), bundle status, readiness. */
@Module({
  providers: [
    Clock,
    {
      // Redis is optional: without it the gateway keeps its last-good copies in memory only.
      provide: LAST_GOOD_STORE,
      useFactory: async (config: GatewayConfig, metrics: GatewayMetrics) => {
        if (config.redisServer === undefined) return null;
        const client = await openRedis(
          config.redisServer,
          redisUseOptions('lastGood', config.mcp.redis),
        );
        return new RedisLastGoodStore(client, config, metrics);
      },
      inject: [GATEWAY_CONFIG, GatewayMetrics],
    },
    {
      // approvals of pinned tools, shared by the replicas through Redis when it is configured
      provide: PIN_STORE,
      useFactory: async (config: GatewayConfig) => {
        if (config.redisServer === undefined) return null;
        const client = await openRedis(
          config.redisServer,
          redisUseOptions('pins', config.mcp.redis),
        );
        return new RedisPinStore(client, config);
      },
      inject: [GATEWAY_CONFIG],
    },
    PinnedTools,
    UpstreamIntake,
    RegistryService,
    // one cache of compiled inputSchema validators for every call (docs/operations.md §6 "Argument validation")
    { provide: ArgumentValidators, useFactory: () => new ArgumentValidators() },
  ],
  exports: [Clock, RegistryService, ArgumentValidators, PinnedTools],
})
export class RegistryModule {}
