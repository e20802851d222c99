import type { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

export interface ShutdownTargets {
  /** The agent-facing application (PORT). */
  readonly app: NestFastifyApplication;
  /** The management application (MANAGEMENT_PORT), closed last so probes answer during the drain. */
  readonly management: NestFastifyApplication;
  /** Turns readiness down. */
  readonly markDraining: () => void;
  /** Longest wait for in-flight requests, in ms (mcp.shutdown.gracePeriodSeconds). */
  readonly gracePeriodMs: number;
  readonly logger: Logger;
}

/**
 * SIGTERM, in order: readiness goes down; the /mcp listener stops accepting (requests that
 * still arrive on open connections get 503); in-flight tool calls finish, bounded by the
 * grace period, after which their connections are cut; then the application hooks run (the
 * refresh schedule stops, HTTP clients close, Redis closes) and the management listener
 * closes last.
 */
export async function drainAndClose(targets: ShutdownTargets): Promise<void> {
  const { app, management, logger } = targets;
  targets.markDraining();
  const fastify = app.getHttpAdapter().getInstance();
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), targets.gracePeriodMs);
  });
  const server = app.getHttpServer();
  const drained = fastify.close().then(() => 'drained' as const);
  // A keep-alive connection whose request finishes after close() began stays open until
  // closed: sweep idle ones so the drain ends when the last in-flight call does.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  if ((await Promise.race([drained, graceOver])) === 'timeout') {
    logger.warn(
      `Grace period of ${targets.gracePeriodMs} ms is over; cutting the remaining connections`,
    );
    server.closeAllConnections();
    await drained;
  }
  clearInterval(sweeper);
  clearTimeout(timer);
  await app.close();
  await management.close();
}
