import type { Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
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
    if (limits.store !== 'redis' || !anyBucket || config.redisUrl === undefined) return null;
    const { Redis } = await import('ioredis');
    return new RedisBuckets(
      config.redisUrl,
      {
        commandTimeoutMillis: config.mcp.redis.commandTimeoutMillis,
        connectTimeoutMillis: config.mcp.redis.connectTimeoutMillis,
      },
      (url, options) => new Redis(url, options),
    );
  },
  inject: [GATEWAY_CONFIG],
};
