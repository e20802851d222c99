import type { INestApplicationContext, Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { closeIdleAndUnused } from '@app/mcp';

export interface ShutdownTargets {
  /** The gateway's application context (modules, schedule, HTTP clients, Redis). */
  readonly app: INestApplicationContext;
  /** The agents' listener (PORT): McpHttpServer, or the fastify application's drain. */
  readonly mcp: { drain(graceMs: number): Promise<boolean> };
  /** The management application (MANAGEMENT_PORT), closed last so probes answer during the drain. */
  readonly management: NestFastifyApplication;
  /**
   * The bundle tools running as tasks here (GatewayTasks): they get what is left of the grace
   * period after the listener drained, then end failed (docs/operations.md §10 "Tasks").
   */
  readonly tasks: { drain(graceMs: number): Promise<void> };
  /** Turns readiness down. */
  readonly markDraining: () => void;
  /** Longest wait for in-flight requests, in ms (mcp.shutdown.gracePeriodSeconds). */
  readonly gracePeriodMs: number;
  readonly logger: Logger;
}

/**
 * SIGTERM, in order: readiness goes down; the /mcp listener stops accepting (requests that
 * still arrive on open connections get 503); in-flight tool calls finish, bounded by the
 * grace period, after which their connections are cut; tasks running here get what is left of
 * it, then end failed; then the application hooks run (the
 * refresh schedule stops, HTTP clients close, Redis closes) and the management listener
 * closes last, its open requests bounded by what is left of the same grace period.
 */
export async function drainAndClose(targets: ShutdownTargets): Promise<void> {
  const { app, mcp, management, logger } = targets;
  const deadline = performance.now() + targets.gracePeriodMs;
  targets.markDraining();
  if (!(await mcp.drain(targets.gracePeriodMs))) {
    logger.warn(
      `Grace period of ${targets.gracePeriodMs} ms is over; cut the remaining connections`,
    );
  }
  await targets.tasks.drain(Math.max(0, deadline - performance.now()));
  await app.close();
  await closeWithin(management, Math.max(0, deadline - performance.now()), logger);
}

/**
 * Closes the management listener, waiting for its open requests only for what is left of the
 * grace period: a slow client on the management port cannot hold the shutdown, nor a connection
 * that serves no request (idle, or never used: a probe's or a browser's pre-opened socket).
 */
async function closeWithin(
  management: NestFastifyApplication,
  remainingMs: number,
  logger: Logger,
): Promise<void> {
  const server = management.getHttpServer();
  let timer: NodeJS.Timeout | undefined;
  const closed = management.close();
  const sweeper = setInterval(() => closeIdleAndUnused(server), 50);
  closeIdleAndUnused(server);
  const inTime = await Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), remainingMs);
    }),
  ]);
  clearTimeout(timer);
  clearInterval(sweeper);
  if (!inTime) {
    logger.warn('Management requests still open after the grace period; cut');
    server.closeAllConnections();
    await closed;
  }
}
