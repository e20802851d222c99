import type { Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { openRedis, redisUseOptions } from '@app/redis';
import { RATE_LIMIT_REDIS } from './caller-limits.service';
import { RedisBuckets } from './redis-buckets';

/**
 * The shared buckets of mcp.rateLimits.store redis
 * (docs/operations.md §14 "Rate limits per caller"), on a connection of their own; null (memory
 * only) otherwise, and ioredis is then never loaded.
 */
export const rateLimitRedisProvider: Provider = {
  provide: RATE_LIMIT_REDIS,
  useFactory: async (config: GatewayConfig): Promise<RedisBuckets | null> => {
    const limits = config.mcp.rateLimits;
    const anyBucket = limits.perSubject !== undefined || limits.perTool !== undefined;
    if (limits.store !== 'redis' || !anyBucket || config.redisServer === undefined) return null;
    return new RedisBuckets(
      await openRedis(config.redisServer, redisUseOptions('rateBuckets', config.mcp.redis)),
    );
  },
  inject: [GATEWAY_CONFIG],
};
