import type { GatewayConfig } from '@app/config';
import type { Redis } from 'ioredis';

/**
 * A Redis connection for state read on a request's path (2025 sessions' log levels, tasks):
 * connected lazily, every command bounded by `mcp.redis.commandTimeoutMillis` and none queued
 * or retried while Redis is away, so a request waits for Redis at most that long. ioredis is
 * loaded by the first such connection only.
 */
export async function openRequestPathRedis(
  redisUrl: string,
  config: GatewayConfig,
): Promise<Redis> {
  const { Redis } = await import('ioredis');
  return new Redis(redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.mcp.redis.commandTimeoutMillis,
    connectTimeout: config.mcp.redis.connectTimeoutMillis,
    retryStrategy: (attempt) => Math.min(250 * attempt, 5000),
  });
}
