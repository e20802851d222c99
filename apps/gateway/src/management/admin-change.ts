import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  return actionIn(req.routeOptions?.config);
}

function actionIn(config: unknown): AdminAction | undefined {
  const action =
    typeof config === 'object' && config !== null
      ? (config as Readonly<Record<string, unknown>>)[ADMIN_ACTION]
      : undefined;
  return typeof action === 'string' ? (action as AdminAction) : undefined;
}

interface MarkedRoute {
  readonly method: string;
  /** The route's path split at `/`; a `:name` segment matches any one segment. */
  readonly segments: readonly string[];
  readonly action: AdminAction;
}

/**
 * The /admin change routes as their marks (`AdminChange`) name them, read from fastify as it
 * registers each route: the action of a request refused before fastify routes it (the
 * management port's `Host` check, management-host-policy.ts), so that refusal is audited under
 * the action of the route it was for, like one refused after (docs/operations.md §15
 * "Access": every change attempt writes one audit line). No list of its own: a route marked
 * later is found the same way.
 */
export class AdminChangeRoutes {
  private readonly routes: MarkedRoute[] = [];

  /** Reads every route registered on `fastify` from now on (its `onRoute` hook). */
  collect(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      const action = actionIn(route.config);
      if (action === undefined) return;
      for (const method of [route.method].flat())
        this.routes.push({ method: method.toUpperCase(), segments: route.url.split('/'), action });
    });
  }

  /**
   * The action of the marked route a request target names, if any: its path (of the origin
   * or the absolute form, without the query) decoded segment by segment, as the router
   * decodes it (`/admin/%75pstreams` is `/admin/upstreams`).
   */
  actionOf(method: string | undefined, target: string | undefined): AdminAction | undefined {
    const path = pathOf(target ?? '/');
    if (method === undefined || path === undefined) return undefined;
    const segments = path.split('/').map(decoded);
    const wanted = method.toUpperCase();
    return this.routes.find(
      (r) =>
        r.method === wanted &&
        r.segments.length === segments.length &&
        r.segments.every((s, i) => s.startsWith(':') || s === segments[i]),
    )?.action;
  }
}

/** The path of a request target, origin form or absolute form (RFC 9112 §3.2), no query. */
function pathOf(target: string): string | undefined {
  const m = /^https?:\/\/[^/?#]*/i.exec(target);
  const rest = m === null ? target : target.slice(m[0].length);
  if (!rest.startsWith('/')) return undefined;
  return rest.split(/[?#]/, 1)[0];
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
