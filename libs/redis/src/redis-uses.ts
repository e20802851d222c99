import type { RedisConfig } from '@app/config';
import type { RedisUseOptions } from './redis-client';

/**
 * Every connection the gateway opens to Redis, by use, with the options that differ and why
 * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster"). With Redis each replica
 * opens: the last-good store, the rate-limit buckets (with `rateLimits.store: redis`), the
 * request-path state (2025 session log levels and tool selections, tasks; one each), the
 * registrations, the approvals of pinned tools, the registered virtual servers, and a
 * publisher and a subscriber each for the multi round-trip handoff and the resource-update
 * bus.
 */
export type RedisUse =
  | 'lastGood'
  | 'rateBuckets'
  | 'requestPath'
  | 'registrations'
  | 'pins'
  | 'virtualServers'
  | 'handoffPublisher'
  | 'handoffSubscriber'
  | 'busPublisher'
  | 'busSubscriber';

/** Reconnect after 250 ms × attempt, at most every 5 s: a Redis that is away is not hammered. */
const backoff = (attempt: number): number => Math.min(250 * attempt, 5000);

export function redisUseOptions(use: RedisUse, r: RedisConfig): RedisUseOptions {
  switch (use) {
    // Read and written beside a request, a pull or a call: each command bounded by
    // commandTimeoutMillis, none queued or retried while Redis is away (the caller goes on
    // from memory at once), connected explicitly so the boot never waits for Redis.
    case 'lastGood':
    case 'rateBuckets':
    case 'requestPath':
      return {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: r.commandTimeoutMillis,
        connectTimeout: r.connectTimeoutMillis,
        retryStrategy: backoff,
      };
    // An admin's write must reach the store or fail with an answer: queued while connecting,
    // never retried (a retried script could apply twice), bounded by at least 1 s since a
    // registration script touches four keys. Approvals of pinned tools are an operator's
    // writes too (docs/operations.md §6), and registrations of virtual servers (§16).
    case 'registrations':
    case 'pins':
    case 'virtualServers':
      return {
        enableOfflineQueue: true,
        maxRetriesPerRequest: 0,
        commandTimeout: Math.max(r.commandTimeoutMillis, 1000),
        connectTimeout: r.connectTimeoutMillis,
        retryStrategy: backoff,
      };
    // A multi round-trip retry that reached another replica waits for its holder's answer:
    // one retry of a publish, at least 1 s, ioredis' own reconnect backoff.
    case 'handoffPublisher':
      return {
        maxRetriesPerRequest: 1,
        commandTimeout: Math.max(r.commandTimeoutMillis, 1000),
        connectTimeout: r.connectTimeoutMillis,
      };
    // A subscriber's SUBSCRIBE stays pending until Redis answers: no command bound.
    case 'handoffSubscriber':
      return {
        maxRetriesPerRequest: 1,
        connectTimeout: r.connectTimeoutMillis,
        autoResubscribe: false,
      };
    // A resource update is published best-effort within the command bound.
    case 'busPublisher':
      return {
        maxRetriesPerRequest: 1,
        commandTimeout: r.commandTimeoutMillis,
        connectTimeout: r.connectTimeoutMillis,
        retryStrategy: backoff,
      };
    case 'busSubscriber':
      return {
        maxRetriesPerRequest: 1,
        connectTimeout: r.connectTimeoutMillis,
        retryStrategy: backoff,
        autoResubscribe: false,
      };
  }
}
