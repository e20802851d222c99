import { createServer, type RequestListener } from 'node:http';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { MANAGEMENT_MAX_BODY_BYTES } from '@app/wire';
import type { AdminAuditLog } from '../admin/admin-audit-log';
import { AdminChangeRoutes } from './admin-change';
import { ManagementHostPolicy } from './management-host-policy';

/**
 * A client has this long, in ms, to send a whole request to the management port: probes and
 * scrapes are small GETs, so a body dripped byte by byte is cut (408) instead of holding a
 * connection and, at SIGTERM, the shutdown.
 */
export const MANAGEMENT_REQUEST_TIMEOUT_MS = 10_000;
/** How often, in ms, node:http checks requests against that timeout (its default is 30 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Idle keep-alive connections of scrapers and probes stay open this long, in ms. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * The fastify adapter of the management listener, on a node:http server with a request
 * timeout (fastify itself sets none) whose every request passes the `Host` check first
 * (management-host-policy.ts), whatever its path or method. A change to /admin refused there
 * writes its audit line (docs/operations.md §15 "Access"), under the action of the route it
 * names (admin-change.ts), with no actor and no upstream: neither token nor body was read.
 */
export function managementAdapter(
  hosts: ManagementHostPolicy,
  audit: Pick<AdminAuditLog, 'record'>,
): FastifyAdapter {
  const changes = new AdminChangeRoutes();
  const adapter = new FastifyAdapter({
    // fastify's default, named: the stores bound what they read back from Redis by it
    bodyLimit: MANAGEMENT_MAX_BODY_BYTES,
    serverFactory: (handler: RequestListener) =>
      createServer(
        {
          requestTimeout: MANAGEMENT_REQUEST_TIMEOUT_MS,
          headersTimeout: MANAGEMENT_REQUEST_TIMEOUT_MS,
          connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        },
        hosts.guard(handler, (req, status, reason) => {
          const action = changes.actionOf(req.method, req.url);
          if (action !== undefined)
            audit.record({
              action,
              upstreamId: null,
              actor: null,
              status,
              outcome: 'refused',
              detail: `refused before the route ran: ${reason}`,
            });
        }),
      ),
  });
  // before Nest registers its routes: the marked ones are read as they come
  changes.collect(adapter.getInstance());
  return adapter;
}
