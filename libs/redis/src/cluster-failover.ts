import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

function nodeKey(node: Redis): string {
  return `${node.options.host ?? ''}:${node.options.port ?? ''}`;
}

/**
 * Calls `listener` each time a Redis Cluster has replaced a node it lost. Losing one master is
 * no reconnection of the cluster client (its other nodes stay connected, so no `ready` follows),
 * yet the replica promoted in its place may lack the last writes acknowledged before the loss
 * (replication is asynchronous; docs/operations.md §5 "Redis: one server, Sentinel or Cluster"). The loss
 * is a node leaving the client's pool (`-node`); the replacement is a later slots refresh
 * (`refresh`, at least every few seconds) whose masters no longer include that node. A single
 * server's or the sentinels' client reconnects instead (`ready`), which its users watch: for
 * one, nothing is called.
 */
export function onClusterFailover(client: RedisClient, listener: () => void): void {
  // asked of the client, not by `instanceof`: ioredis is loaded by the first connection only
  // (openRedis), never by a gateway without Redis
  if (!isCluster(client)) return;
  const left = new Set<string>();
  client.on('-node', (node: Redis) => left.add(nodeKey(node)));
  client.on('refresh', () => {
    if (left.size === 0) return;
    const masters = new Set(client.nodes('master').map(nodeKey));
    if ([...left].some((key) => !masters.has(key))) {
      left.clear();
      listener();
    }
  });
}

function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}
