import type { RedisServer } from '@app/config';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { markClosing, reviveWhenEnded } from './sentinel-revival';

/** A connection to the gateway's Redis: one server or a Sentinel master (Redis), or a Cluster. */
export type RedisClient = Redis | Cluster;

/** What one use asks of its connection (the table in redis-uses.ts says which and why). */
export interface RedisUseOptions {
  /** Connect on the first command (or an explicit connect()), not at construction. */
  readonly lazyConnect?: boolean;
  /** Hold commands while disconnected (true) or refuse them at once (false). */
  readonly enableOfflineQueue?: boolean;
  readonly maxRetriesPerRequest: number | null;
  /** Bound of each command in ms; undefined for a subscriber, whose SUBSCRIBE waits for good. */
  readonly commandTimeout?: number;
  readonly connectTimeout: number;
  /** ms before the next reconnect; undefined: ioredis' own backoff. */
  readonly retryStrategy?: (attempt: number) => number;
  /**
   * false for a subscriber: ioredis' own re-SUBSCRIBE after a reconnect has no rejection
   * handler, so a connection lost before Redis answers it (flushed with
   * MaxRetriesPerRequestError) is an unhandled rejection that ends the process; the subscriber's
   * owner subscribes again on 'ready' itself, with a catch.
   */
  readonly autoResubscribe?: boolean;
}

/** How often a Cluster connection reads the slot map again, ms. */
export const CLUSTER_SLOTS_REFRESH_MS = 2_000;

/** How to build the client: the ioredis class and the arguments it is given. */
export type RedisConstruction =
  | { readonly kind: 'redis'; readonly url?: string; readonly options: RedisOptions }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly { host: string; port: number }[];
      readonly options: ClusterOptions;
    };

/**
 * The ioredis arguments for a use of this Redis: credentials and TLS of `server.secrets` on
 * every connection (data nodes and sentinels), the use's own timeouts and queueing. Pure, so
 * the mapping is tested without a server.
 */
export function redisConstruction(server: RedisServer, use: RedisUseOptions): RedisConstruction {
  const { username, password, tls } = server.secrets;
  const node: RedisOptions = {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(tls ? { tls: {} } : {}),
  };
  const perUse: RedisOptions = {
    ...(use.lazyConnect !== undefined ? { lazyConnect: use.lazyConnect } : {}),
    ...(use.enableOfflineQueue !== undefined ? { enableOfflineQueue: use.enableOfflineQueue } : {}),
    maxRetriesPerRequest: use.maxRetriesPerRequest,
    ...(use.commandTimeout !== undefined ? { commandTimeout: use.commandTimeout } : {}),
    connectTimeout: use.connectTimeout,
    ...(use.retryStrategy !== undefined ? { retryStrategy: use.retryStrategy } : {}),
    ...(use.autoResubscribe !== undefined ? { autoResubscribe: use.autoResubscribe } : {}),
  };
  switch (server.kind) {
    case 'standalone':
      // the URL's own user, password and rediss:// win; the environment fills what it lacks
      return { kind: 'redis', url: server.url, options: { ...node, ...perUse } };
    case 'sentinel': {
      const { sentinelUsername, sentinelPassword } = server.secrets;
      return {
        kind: 'redis',
        options: {
          ...node,
          ...perUse,
          sentinels: server.sentinels.map(({ host, port }) => ({ host, port })),
          name: server.masterName,
          role: 'master',
          ...(sentinelUsername !== undefined ? { sentinelUsername } : {}),
          ...(sentinelPassword !== undefined ? { sentinelPassword } : {}),
          ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
          // a failover is noticed from the sentinels' +switch-master at once, not only when
          // the old master's connection breaks
          failoverDetector: true,
          sentinelCommandTimeout: use.connectTimeout,
          sentinelRetryStrategy: (attempt: number) => Math.min(250 * attempt, 5000),
        },
      };
    }
    case 'cluster':
      return {
        kind: 'cluster',
        nodes: server.nodes.map(({ host, port }) => ({ host, port })),
        options: {
          ...(use.lazyConnect !== undefined ? { lazyConnect: use.lazyConnect } : {}),
          ...(use.enableOfflineQueue !== undefined
            ? { enableOfflineQueue: use.enableOfflineQueue }
            : {}),
          ...(use.retryStrategy !== undefined ? { clusterRetryStrategy: use.retryStrategy } : {}),
          slotsRefreshTimeout: use.connectTimeout,
          // ioredis refreshes the slot map on a MOVED or a closed connection only; a command
          // to a master that died fails on its refused connection without either, so the map
          // is read again every 2 s and a failover is followed within that
          slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
          // while a replica is promoted (about the cluster's node timeout) a command is retried
          // on the new owner of its slot instead of failing on the old one
          retryDelayOnFailover: 200,
          retryDelayOnClusterDown: 200,
          redisOptions: {
            ...node,
            maxRetriesPerRequest: use.maxRetriesPerRequest,
            ...(use.commandTimeout !== undefined ? { commandTimeout: use.commandTimeout } : {}),
            connectTimeout: use.connectTimeout,
          },
        },
      };
  }
}

/**
 * A connection to `server` for one use. ioredis is loaded by the first connection only, so a
 * gateway without Redis never pays for the package.
 */
export async function openRedis(server: RedisServer, use: RedisUseOptions): Promise<RedisClient> {
  const { Redis, Cluster } = await import('ioredis');
  const made = redisConstruction(server, use);
  if (made.kind === 'cluster') return new Cluster([...made.nodes], made.options);
  const client =
    made.url !== undefined ? new Redis(made.url, made.options) : new Redis(made.options);
  // a failover may end a Sentinel connection for good in ioredis (sentinel-revival.ts)
  if (server.kind === 'sentinel') reviveWhenEnded(client);
  return client;
}

/** How long shutdown waits for Redis to answer QUIT before it drops the connections, ms. */
export const QUIT_WAIT_MS = 1_000;

/**
 * Ends Redis connections at shutdown: QUIT, which a live Redis answers at once, waited for at
 * most QUIT_WAIT_MS (a silent Redis must not hold the shutdown), then disconnect.
 */
export async function quitRedis(...clients: readonly (RedisClient | undefined)[]): Promise<void> {
  for (const client of clients) if (client !== undefined) markClosing(client);
  await Promise.race([
    Promise.allSettled(clients.flatMap((client) => (client === undefined ? [] : [client.quit()]))),
    new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS).unref()),
  ]);
  for (const client of clients) client?.disconnect();
}

/**
 * What a failed Redis command says in a log line, in an operator's words: ioredis' own texts
 * name its options ("Reached the max retries per request limit (which is 0). Refer to
 * "maxRetriesPerRequest" option…"), which mean nothing to whoever reads the log.
 */
/**
 * Whether a command that failed may still have reached Redis and run there: it timed out
 * (`commandTimeoutMillis`: a Redis that hangs runs it when it wakes), or its connection closed
 * while it waited. A command refused before it was sent (not connected, the offline queue off)
 * or answered with an error did not run. What a write's refusal may promise depends on it.
 */
export function redisOutcomeUnknown(err: unknown): boolean {
  return err instanceof Error && /Command timed out|Connection is closed/i.test(err.message);
}

export function redisFailureText(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown cause';
  const message = err.message;
  if (/max retries per request|Stream isn't writeable|enableOfflineQueue/i.test(message))
    return 'not connected';
  if (/Command timed out/i.test(message)) return 'no answer within mcp.redis.commandTimeoutMillis';
  if (/Connection is closed/i.test(message)) return 'connection closed';
  return message.slice(0, 200);
}
