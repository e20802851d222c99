import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** The open connections of each tracked listener (trackConnections). */
const connections = new WeakMap<Server, Set<Socket>>();

/**
 * Keeps the listener's open connections, for `closeIdleAndUnused` at the drain. Called once,
 * before the listener accepts: one Set entry per connection, nothing per request.
 */
export function trackConnections(server: Server): void {
  const open = new Set<Socket>();
  connections.set(server, open);
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
}

/**
 * Closes the connections that serve no request: the idle keep-alive ones, and those that never
 * sent a byte. node:http counts a new connection as active until its first request ends (its
 * guard against connections that never send, for headersTimeout), so `closeIdleConnections()`
 * leaves it open and `close()` waits for it: a client's pre-opened socket (fetch pools open
 * them) held a drain for its whole grace period. A request that would still come on it during
 * the drain gets the connection closed instead of a 503; the client opens another, to a replica
 * that is not stopping.
 */
export function closeIdleAndUnused(server: Server): void {
  server.closeIdleConnections();
  for (const socket of connections.get(server) ?? []) if (socket.bytesRead === 0) socket.destroy();
}

/**
 * Graceful stop of an /mcp listener, whichever serves it: no new connections, idle keep-alive
 * connections closed as they become idle (and those that never sent a request, if the listener
 * was tracked with `trackConnections`), in-flight requests finish; after `graceMs` the calls
 * still running are abandoned (`abandon`: each is answered "the gateway is shutting down") and
 * the remaining connections cut.
 * @returns true when everything finished within the grace period
 */
export async function drainListener(
  server: Server,
  graceMs: number,
  abandon: () => Promise<void>,
): Promise<boolean> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A keep-alive connection whose request finishes after close() began stays open until
  // closed: sweep idle (and unused) ones so the drain ends when the last in-flight call does.
  const sweeper = setInterval(() => closeIdleAndUnused(server), 50);
  closeIdleAndUnused(server);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  if (timedOut) {
    await abandon();
    server.closeAllConnections();
    await closed;
  }
  clearInterval(sweeper);
  clearTimeout(timer);
  return !timedOut;
}
