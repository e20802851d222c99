import { invalid, type ConfigProblem } from './config-problem';
import { isIPv6 } from 'node:net';
import type { RedisConfig } from './mcp-config.model';

type Env = Readonly<Record<string, string | undefined>>;

/** One Redis node or sentinel, from a `host:port` entry (`[v6]:port` for IPv6). */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Credentials and TLS of the Redis servers, from the environment (docs/operations.md §1
 * "Environment"), never from the config file: `REDIS_USERNAME`/`REDIS_PASSWORD` (ACL user or
 * `requirepass`) for the data nodes, `REDIS_SENTINEL_USERNAME`/`REDIS_SENTINEL_PASSWORD` for
 * the sentinels, `REDIS_TLS=true` for TLS to both (trusted CAs: Node's, plus
 * `NODE_EXTRA_CA_CERTS`).
 */
export interface RedisSecrets {
  readonly username?: string;
  readonly password?: string;
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
  readonly tls: boolean;
}

/**
 * Where the gateway's shared state lives (docs/operations.md §5 "Redis: one server, Sentinel or
 * Cluster"): one server (`REDIS_URL`), a master found through Redis Sentinel
 * (`mcp.redis.sentinels` + `masterName`), or a Redis Cluster (`mcp.redis.clusterNodes`).
 * Absent: every replica keeps its state in memory.
 */
export type RedisServer =
  | { readonly kind: 'standalone'; readonly url: string; readonly secrets: RedisSecrets }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly RedisNode[];
      readonly masterName: string;
      readonly secrets: RedisSecrets;
    }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly RedisNode[];
      readonly secrets: RedisSecrets;
    };

/** `host:port` or `[v6]:port`; the port 1..65535. */
export const REDIS_NODE_PATTERN =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?:6553[0-5]|655[0-2]\d|65[0-4]\d{2}|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3})$/;

export function parseRedisNode(entry: string): RedisNode | undefined {
  if (!REDIS_NODE_PATTERN.test(entry)) return undefined;
  const at = entry.lastIndexOf(':');
  const port = Number(entry.slice(at + 1));
  if (port < 1 || port > 65535) return undefined;
  const bracketed = /^\[(.*)\]$/.exec(entry.slice(0, at));
  if (bracketed !== null && !isIPv6(bracketed[1] ?? '')) return undefined;
  return { host: bracketed?.[1] ?? entry.slice(0, at), port };
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : value;

function secretsFrom(env: Env, problems: ConfigProblem[]): RedisSecrets {
  const tls = nonEmpty(env.REDIS_TLS);
  if (tls !== undefined && tls !== 'true' && tls !== 'false')
    problems.push(invalid('REDIS_TLS', `must be true or false (got "${tls}")`));
  return {
    username: nonEmpty(env.REDIS_USERNAME),
    password: nonEmpty(env.REDIS_PASSWORD),
    sentinelUsername: nonEmpty(env.REDIS_SENTINEL_USERNAME),
    sentinelPassword: nonEmpty(env.REDIS_SENTINEL_PASSWORD),
    tls: tls === 'true',
  };
}

/**
 * The Redis the config and the environment name, or undefined (memory only). Each problem is
 * pushed as a line naming its key; a config that names two kinds, or half of one, is refused
 * rather than guessed at.
 */
export function redisServerFrom(
  redis: Partial<Pick<RedisConfig, 'sentinels' | 'masterName' | 'clusterNodes'>> | undefined,
  env: Env,
  problems: ConfigProblem[],
): RedisServer | undefined {
  const secrets = secretsFrom(env, problems);
  const url = nonEmpty(env.REDIS_URL);
  const sentinels = Array.isArray(redis?.sentinels) ? redis.sentinels : undefined;
  const clusterNodes = Array.isArray(redis?.clusterNodes) ? redis.clusterNodes : undefined;
  const masterName = typeof redis?.masterName === 'string' ? redis.masterName : undefined;
  const named = [
    url !== undefined ? 'REDIS_URL' : undefined,
    sentinels !== undefined ? 'mcp.redis.sentinels' : undefined,
    clusterNodes !== undefined ? 'mcp.redis.clusterNodes' : undefined,
  ].filter((n) => n !== undefined);
  if (named.length > 1) {
    problems.push(
      invalid(
        `${named.join(' and ')}`,
        `name one Redis (a server, Sentinel or a Cluster), not ${named.length}`,
      ),
    );
    return undefined;
  }
  if (masterName !== undefined && sentinels === undefined)
    problems.push(
      invalid('mcp.redis.masterName', 'only with mcp.redis.sentinels (the master they watch)'),
    );
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error('scheme');
    } catch {
      problems.push(invalid('REDIS_URL', 'must be a redis:// or rediss:// URL'));
      return undefined;
    }
    return { kind: 'standalone', url, secrets };
  }
  const nodes = (entries: readonly string[], key: string): RedisNode[] =>
    entries.flatMap((entry, i) => {
      const node = parseRedisNode(entry);
      if (node === undefined)
        problems.push(
          invalid(`${key}[${i}]`, `must be host:port with a port 1..65535 (got "${entry}")`),
        );
      return node === undefined ? [] : [node];
    });
  if (sentinels !== undefined) {
    if (masterName === undefined)
      problems.push(
        invalid('mcp.redis.sentinels', 'needs mcp.redis.masterName (the master they watch)'),
      );
    const parsed = nodes(sentinels, 'mcp.redis.sentinels');
    if (masterName === undefined || parsed.length !== sentinels.length) return undefined;
    return { kind: 'sentinel', sentinels: parsed, masterName, secrets };
  }
  if (clusterNodes !== undefined) {
    const parsed = nodes(clusterNodes, 'mcp.redis.clusterNodes');
    if (parsed.length !== clusterNodes.length) return undefined;
    return { kind: 'cluster', nodes: parsed, secrets };
  }
  return undefined;
}

/** Where a log line may say the shared state lives: no credential, no URL userinfo. */
export function describeRedisServer(server: RedisServer): string {
  switch (server.kind) {
    case 'standalone': {
      const url = new URL(server.url);
      return `${url.protocol}//${url.host}`;
    }
    case 'sentinel':
      return `Sentinel master ${server.masterName} (${server.sentinels.length} sentinels)`;
    case 'cluster':
      return `Redis Cluster (${server.nodes.length} seed nodes)`;
  }
}
