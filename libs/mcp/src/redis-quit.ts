import type { Redis } from 'ioredis';

/** How long shutdown waits for Redis to answer QUIT before it drops the connections, ms. */
export const QUIT_WAIT_MS = 1_000;

/**
 * Ends Redis connections at shutdown: QUIT, which a live Redis answers at once, waited for at
 * most QUIT_WAIT_MS (a silent Redis must not hold the shutdown), then disconnect.
 */
export async function quitRedis(...clients: readonly (Redis | undefined)[]): Promise<void> {
  await Promise.race([
    Promise.allSettled(clients.flatMap((client) => (client === undefined ? [] : [client.quit()]))),
    new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS).unref()),
  ]);
  for (const client of clients) client?.disconnect();
}
