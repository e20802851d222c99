import { Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { openRedis, quitRedis, RedisBreaker, redisUseOptions, type RedisClient } from '@app/redis';

/** DI token of the store 2025 sessions' own state is shared through; null without Redis. */
export const SHARED_SESSION_STORE = Symbol('SHARED_SESSION_STORE');

/**
 * Where 2025 sessions' own state (a log level, docs/operations.md §10 "Logging"; a tool
 * selection, §16 "Tool search") lives for every replica. Keys are `<kind>:<digest of the id>`.
 */
export interface SharedSessionStore {
  set(key: string, value: string, ttlMillis: number): Promise<void>;
  /** The stored value; null when none is stored. Rejects when the store cannot be reached. */
  get(key: string): Promise<string | null>;
  /** Removes the key (a value its setter's share no longer holds). */
  delete(key: string): Promise<void>;
}

/**
 * Values in Redis under `<keyPrefix>:{<identity>}:<kind>:<digest of the session id>`, with the
 * session id's expiry; every command bounded by `mcp.redis.commandTimeoutMillis`, none queued
 * while Redis is away (the caller then reads "none" at once), none sent from a failure until
 * Redis answers again (RedisBreaker). One warning when Redis goes away, one line when it is back.
 */
export class RedisSessionStore implements SharedSessionStore, OnApplicationShutdown {
  private readonly prefix: string;
  private readonly breaker: RedisBreaker;

  constructor(
    private readonly redis: RedisClient,
    config: GatewayConfig,
  ) {
    this.prefix = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:`;
    this.breaker = new RedisBreaker(redis, new Logger('Sessions'), {
      away: "Redis is unreachable: 2025 sessions' log levels and tool selections apply on the replica that was told only, until it is back",
      back: "Redis is back: 2025 sessions' log levels and tool selections are shared again",
    });
    redis.connect().catch(() => this.breaker.failed());
  }

  async set(key: string, value: string, ttlMillis: number): Promise<void> {
    await this.breaker.run(() =>
      this.redis.set(this.prefix + key, value, 'PX', Math.max(1, Math.ceil(ttlMillis))),
    );
  }

  get(key: string): Promise<string | null> {
    return this.breaker.run(() => this.redis.get(this.prefix + key));
  }

  async delete(key: string): Promise<void> {
    await this.breaker.run(() => this.redis.del(this.prefix + key));
  }

  onApplicationShutdown(): Promise<void> {
    this.breaker.close();
    return quitRedis(this.redis);
  }
}

/** The store when the gateway has Redis (ioredis loaded only then), else null: state per replica. */
export const sharedSessionStoreProvider: Provider = {
  provide: SHARED_SESSION_STORE,
  useFactory: async (config: GatewayConfig): Promise<SharedSessionStore | null> => {
    if (config.redisServer === undefined) return null;
    const client = await openRedis(
      config.redisServer,
      redisUseOptions('requestPath', config.mcp.redis),
    );
    return new RedisSessionStore(client, config);
  },
  inject: [GATEWAY_CONFIG],
};
