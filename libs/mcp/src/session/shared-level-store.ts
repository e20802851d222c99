import { Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { openRedis, quitRedis, redisUseOptions, type RedisClient } from '@app/redis';

/** DI token of the store SessionLogLevels shares levels through; null without Redis. */
export const SHARED_LEVEL_STORE = Symbol('SHARED_LEVEL_STORE');

/** Where 2025 sessions' log levels live for every replica (docs/operations.md §10 "Logging"). */
export interface SharedLevelStore {
  set(key: string, level: string, ttlMillis: number): Promise<void>;
  /** The stored level; null when none is stored. Rejects when the store cannot be reached. */
  get(key: string): Promise<string | null>;
}

/**
 * Levels in Redis under `<keyPrefix>:{<identity>}:log-level:<digest of the session id>`, with the
 * session id's expiry; every command bounded by `mcp.redis.commandTimeoutMillis`, none queued
 * while Redis is away (the caller then reads "no level" at once). One warning when Redis goes
 * away, one line when it is back.
 */
export class RedisLevelStore implements SharedLevelStore, OnApplicationShutdown {
  private readonly logger = new Logger('Logging');
  private readonly prefix: string;
  private healthy = true;

  constructor(
    private readonly redis: RedisClient,
    config: GatewayConfig,
  ) {
    this.prefix = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:log-level:`;
    redis.on('error', () => this.unhealthy());
    redis.on('ready', () => {
      if (!this.healthy) this.logger.log("Redis is back: sessions' log levels are shared again");
      this.healthy = true;
    });
    redis.connect().catch(() => this.unhealthy());
  }

  async set(key: string, level: string, ttlMillis: number): Promise<void> {
    try {
      await this.redis.set(this.prefix + key, level, 'PX', Math.max(1, Math.ceil(ttlMillis)));
    } catch (err) {
      this.unhealthy();
      throw err;
    }
  }

  async get(key: string): Promise<string | null> {
    try {
      return await this.redis.get(this.prefix + key);
    } catch (err) {
      this.unhealthy();
      throw err;
    }
  }

  onApplicationShutdown(): Promise<void> {
    return quitRedis(this.redis);
  }

  private unhealthy(): void {
    if (!this.healthy) return;
    this.healthy = false;
    this.logger.warn(
      "Redis is unreachable: 2025 sessions' log levels apply on the replica that was told only, until it is back",
    );
  }
}

/** The store when the gateway has Redis (ioredis loaded only then), else null: levels per replica. */
export const sharedLevelStoreProvider: Provider = {
  provide: SHARED_LEVEL_STORE,
  useFactory: async (config: GatewayConfig): Promise<SharedLevelStore | null> => {
    if (config.redisServer === undefined) return null;
    const client = await openRedis(
      config.redisServer,
      redisUseOptions('requestPath', config.mcp.redis),
    );
    return new RedisLevelStore(client, config);
  },
  inject: [GATEWAY_CONFIG],
};
