import { Logger } from '@nestjs/common';
import { quitRedis, RedisBreaker, type RedisClient } from '@app/redis';
import type { BucketSettings, BucketVerdict } from './token-bucket';

/**
 * The token-bucket rule of token-bucket.ts, atomic in Redis: refill by the time passed (Redis'
 * own clock, so replicas' clocks never disagree), take one token or answer the wait in ms.
 * The key expires once the bucket would be full again. Returns {admitted 0|1, waitMs}.
 */
const TAKE_TOKEN = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
local at = tonumber(held[2])
if tokens == nil or at == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - at) / 1000 * rate)
end
local admitted = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  admitted = 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return {admitted, wait}
`;

type RedisWithScript = RedisClient & {
  takeToken(key: string, capacity: number, rate: number): Promise<[number, number]>;
};

/**
 * Token buckets shared by every replica through Redis (mcp.rateLimits.store: redis;
 * docs/operations.md §14 "Rate limits per caller"). Each take is one atomic script call bounded by
 * mcp.redis.commandTimeoutMillis; when it fails (Redis down, slow, not yet connected) the answer is
 * undefined and the caller counts in memory instead, and so do the takes after it, at once,
 * until Redis answers again (RedisBreaker: a Redis that hangs would otherwise cost every call
 * its timeout). One warning when Redis goes away, one line when it is back.
 */
export class RedisBuckets {
  private readonly redis: RedisWithScript;
  private readonly breaker: RedisBreaker;

  /** @param client a connection for the `rateBuckets` use (libs/redis), not yet connected. */
  constructor(client: RedisClient) {
    this.redis = client as RedisWithScript;
    this.redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN });
    this.breaker = new RedisBreaker(this.redis, new Logger('RateLimits'), {
      away: 'Redis is unreachable: rate limits now count per replica in memory until it is back',
      back: 'Redis is back: rate-limit buckets are shared again',
    });
    this.redis.connect().catch(() => this.breaker.failed());
  }

  /** The verdict from the shared bucket, or undefined when Redis could not answer. */
  async take(key: string, settings: BucketSettings): Promise<BucketVerdict | undefined> {
    try {
      const [admitted, wait] = await this.breaker.run(() =>
        this.redis.takeToken(key, settings.capacity, settings.refillPerSecond),
      );
      return admitted === 1 ? { admitted: true } : { admitted: false, retryAfterMs: wait };
    } catch {
      return undefined;
    }
  }

  /** QUIT, waited for at most 1 s (a silent Redis must not hold the shutdown), then disconnect. */
  close(): Promise<void> {
    this.breaker.close();
    return quitRedis(this.redis);
  }
}
