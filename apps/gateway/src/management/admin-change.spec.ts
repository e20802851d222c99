import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import fastify from 'fastify';
import { AdminChangeRoutes, adminChangeOf } from './admin-change';

const CHANGES = new Set<RequestMethod>([
  RequestMethod.POST,
  RequestMethod.PUT,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
]);

/** Every change route of the management port's /admin controllers, with its route config. */
async function adminChangeRoutes(): Promise<{ route: string; config: unknown }[]> {
  const routes: { route: string; config: unknown }[] = [];
  // the /admin controllers are the admin-*.controller.ts files (others import terminus, whose
  // decorators do not load under jest's module registry twice)
  const files = readdirSync(__dirname).filter(
    (f) => f.startsWith('admin-') && f.endsWith('.controller.ts'),
  );
  for (const file of files) {
    const module = (await import(join(__dirname, file))) as Record<string, unknown>;
    for (const exported of Object.values(module)) {
      if (typeof exported !== 'function') continue;
      const paths: unknown = Reflect.getMetadata(PATH_METADATA, exported);
      const prefixes = (Array.isArray(paths) ? paths : [paths]).filter(
        (p): p is string => typeof p === 'string' && p.startsWith('admin'),
      );
      if (prefixes.length === 0) continue;
      const proto = (exported as { prototype: Record<string, unknown> }).prototype;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (typeof handler !== 'function') continue;
        const method: unknown = Reflect.getMetadata(METHOD_METADATA, handler);
        if (!CHANGES.has(method as RequestMethod)) continue;
        routes.push({
          route: `${RequestMethod[method as RequestMethod]} ${prefixes.join('|')} ${name}`,
          config: Reflect.getMetadata('__fastify_route_config__', handler),
        });
      }
    }
  }
  return routes;
}

describe('AdminChange: the audit action on every /admin change route (docs/operations.md §15)', () => {
  it('every POST, PUT, PATCH and DELETE under /admin names its action', async () => {
    const routes = await adminChangeRoutes();
    // upstreams (3), reviews (1), servers (3)
    expect(routes.length).toBeGreaterThanOrEqual(7);
    const missing = routes.filter((r) => {
      const req = { routeOptions: { config: r.config } } as unknown as FastifyRequest;
      return adminChangeOf(req) === undefined;
    });
    expect(missing.map((r) => r.route)).toEqual([]);
  });

  it('a request no change route matched has no action', () => {
    expect(adminChangeOf({ routeOptions: { config: {} } } as unknown as FastifyRequest)).toBe(
      undefined,
    );
    expect(adminChangeOf({} as unknown as FastifyRequest)).toBe(undefined);
  });
});

describe('AdminChangeRoutes: the action of a request not routed yet (docs/operations.md §15 "Access")', () => {
  const changes = new AdminChangeRoutes();

  beforeAll(async () => {
    const app = fastify();
    changes.collect(app);
    const ok = () => 'ok';
    app.post('/admin/upstreams', { config: { adminAction: 'upstream.register' } }, ok);
    app.patch('/admin/upstreams/:id', { config: { adminAction: 'upstream.update' } }, ok);
    app.route({
      method: ['DELETE'],
      url: '/admin/servers/:id',
      config: { adminAction: 'server.delete' },
      handler: ok,
    });
    app.get('/admin/upstreams', ok);
    await app.ready();
  });

  it.each([
    ['POST', '/admin/upstreams', 'upstream.register'],
    ['post', '/admin/%75pstreams?x=1', 'upstream.register'],
    ['POST', 'http://evil.example:9090/admin/upstreams', 'upstream.register'],
    ['PATCH', '/admin/upstreams/a%20b', 'upstream.update'],
    ['DELETE', '/admin/servers/x', 'server.delete'],
  ])('%s %s is %s', (method, target, action) => {
    expect(changes.actionOf(method, target)).toBe(action);
  });

  it.each([
    ['GET', '/admin/upstreams'],
    ['PUT', '/admin/upstreams'],
    ['POST', '/admin/upstreams/x'],
    ['DELETE', '/admin/servers'],
    ['POST', '/Admin/upstreams'],
    ['POST', '*'],
    ['POST', '/admin/%zz'],
    [undefined, '/admin/upstreams'],
  ])('%s %s is no change route', (method, target) => {
    expect(changes.actionOf(method, target)).toBe(undefined);
  });
});
