import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rawHttp } from '../support/raw-http';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §15 "Access": "Every change attempt writes one JSON log line,
 * `event: "admin_audit"`"; §15 "Routes": a body refused before the route (415, 413, not JSON)
 * still has "their audit line" (no actor, no upstreamId). §16 "Registered at runtime":
 * /admin/servers has "the registration API's access rules and audit lines"; §6: approvals have
 * "one `admin_audit` line per attempt (`action: tools.approve`)".
 *
 * Every change route (POST, PUT, PATCH, DELETE under /admin) writes that line when fastify
 * refuses the body before the route runs, under the route's own action, also on a spelling
 * of the path the router decodes (`/admin/%75pstreams`), and without the caller's text.
 */

const ADMIN_TOKEN = 'audit-before-route-admin-token-0123456789abcdef';

function auditLines(gateway: GatewayProcess): Record<string, unknown>[] {
  return gateway.stdout
    .split('\n')
    .filter((l) => l.includes('"admin_audit"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('admin_audit for change attempts refused before the route runs', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')]),
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  const BIG = `{"id":"x","pad":"${'a'.repeat(1_100_000)}"}`;
  // [method, path, content-type, body, the action audited]
  const CASES: readonly (readonly [string, string, string, string, string])[] = [
    ['POST', '/admin/upstreams', 'application/json', '{not json', 'upstream.register'],
    ['PATCH', '/admin/upstreams/shop', 'application/json', '{not json', 'upstream.update'],
    ['POST', '/admin/servers', 'application/json', '{not json', 'server.register'],
    ['POST', '/admin/virtual-servers', 'application/json', '{not json', 'server.register'],
    ['PUT', '/admin/servers/claims', 'application/json', '{not json', 'server.replace'],
    ['POST', '/admin/reviews/shop/approve', 'application/json', '{not json', 'tools.approve'],
    ['POST', '/admin/servers', 'application/xml', '<a/>', 'server.register'],
    ['PUT', '/admin/servers/claims', 'application/json', BIG, 'server.replace'],
    ['POST', '/admin/%75pstreams', 'application/json', '{not json', 'upstream.register'],
  ];

  it('/admin/%75pstreams is the register route (router decodes it): a valid body without a token is its 401, audited', async () => {
    const before = auditLines(gateway).length;
    const answer = await rawHttp(
      gateway.managementPort,
      'POST',
      '/admin/%75pstreams',
      { host: '127.0.0.1', 'content-type': 'application/json' },
      '{"id":"x","url":"http://127.0.0.1:9/mcp"}',
    );
    expect(answer.status).toBe(401);
    await new Promise((r) => setTimeout(r, 400));
    expect(auditLines(gateway).slice(before)).toMatchObject([
      { action: 'upstream.register', status: 401 },
    ]);
  });

  it.each(CASES)(
    '%s %s (%s) is refused and leaves an admin_audit line',
    async (method, path, type, body, action) => {
      const before = auditLines(gateway).length;
      const answer = await rawHttp(
        gateway.managementPort,
        method,
        path,
        { host: `127.0.0.1:${gateway.managementPort}`, 'content-type': type },
        body,
      );
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      // log lines arrive a little after the answer
      await new Promise((r) => setTimeout(r, 400));
      const after = auditLines(gateway).slice(before);
      expect(after).toMatchObject([
        { action, status: answer.status, outcome: 'refused', actor: null, upstreamId: null },
      ]);
      // the parser's message may quote the body: not the caller's text in the log
      expect(JSON.stringify(after)).not.toContain('not json');
    },
  );
});

/**
 * docs/operations.md §15 "Access": `upstreamId` is `null` whenever the caller is anonymous
 * (no actor): the body of an unauthenticated request is not logged. Without an admin credential
 * every writer is anonymous, refused 403.
 */
describe('no admin credential: an anonymous write is refused 403', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it("and the id in its body (the caller's text) is not written to the audit line", async () => {
    const marker = 'ANON-TEXT-IN-THE-AUDIT-LOG';
    for (const [method, path] of [
      ['POST', '/admin/upstreams'],
      ['POST', '/admin/servers'],
      ['PATCH', `/admin/upstreams/${marker}`],
    ] as const) {
      const answer = await rawHttp(
        gateway.managementPort,
        method,
        path,
        { host: '127.0.0.1', 'content-type': 'application/json' },
        JSON.stringify({ id: marker, url: 'http://127.0.0.1:9/mcp', tools: ['x'] }),
      );
      expect(answer.status).toBe(403);
    }
    await new Promise((r) => setTimeout(r, 400));
    const lines = auditLines(gateway);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.every((l) => l.upstreamId === null)).toBe(true);
    expect(lines.filter((l) => JSON.stringify(l).includes(marker))).toEqual([]);
  });
});
