import type { Server } from 'node:http';

/**
 * Graceful stop of an /mcp listener, whichever serves it: no new connections, idle keep-alive
 * connections closed as they become idle, in-flight requests finish; after `graceMs` the calls
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
  // closed: sweep idle ones so the drain ends when the last in-flight call does.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
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
