import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import type { AdminAction } from '../admin/admin-audit-log';

/** The key of a change route's fastify config naming its audit action. */
const ADMIN_ACTION = 'adminAction';

/**
 * Marks an /admin change route (POST, PUT, PATCH, DELETE) with the action its audit lines name.
 * The action travels on the route fastify matched, so a change refused before the route runs
 * (a body that is not JSON, too large or of another type; docs/operations.md §15 "Routes") is
 * audited under the same action, on whatever spelling of the path the router decoded to it
 * (`/admin/%75pstreams`). Every change route carries one (admin-change.spec.ts).
 */
export function AdminChange(action: AdminAction): MethodDecorator {
  return RouteConfig({ [ADMIN_ACTION]: action });
}

/** The action of the /admin change route fastify matched for a request, if it is one. */
export function adminChangeOf(req: FastifyRequest): AdminAction | undefined {
  const config: unknown = req.routeOptions?.config;
  const action =
    typeof config === 'object' && config !== null
      ? (config as Readonly<Record<string, unknown>>)[ADMIN_ACTION]
      : undefined;
  return typeof action === 'string' ? (action as AdminAction) : undefined;
}
