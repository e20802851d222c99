import type { Redis } from 'ioredis';

/** How long after an unwanted end a Sentinel connection connects again, ms. */
export const REVIVE_AFTER_MS = 1_000;

/** Connections this process is closing (quitRedis): their end is wanted. */
const closing = new WeakSet<object>();

/** Marks a connection as being closed on purpose: it is never connected again. */
export function markClosing(client: object): void {
  closing.add(client);
}

/** The part of an ioredis connection the revival uses (a real `Redis`, or a spec's stand-in). */
export type RevivableRedis = Pick<Redis, 'status' | 'connect' | 'on'>;

/**
 * Connects a Sentinel connection again when it ended without being closed
 * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster").
 *
 * Why: ioredis (6.0) ends a Sentinel connection for good when the sentinels' `+switch-master`
 * arrives while it is connecting again after losing the old master: the failover detector of
 * the lost connection disconnects the connector mid-connect, the connect fails with "Connection
 * is closed." and the client's status becomes `end`, after which it never reconnects. Under load
 * a reconnect attempt (asking a sentinel for the master) is slow enough to be caught so; one
 * replica then served from memory for good after a failover that its siblings survived.
 * A connection closed through quitRedis (markClosing) is left closed.
 */
export function reviveWhenEnded(client: RevivableRedis, afterMs = REVIVE_AFTER_MS): void {
  client.on('end', () => {
    if (closing.has(client)) return;
    setTimeout(() => {
      if (closing.has(client) || client.status !== 'end') return;
      // a failed attempt ends it again, and this runs again
      client.connect().catch(() => undefined);
    }, afterMs).unref();
  });
}
