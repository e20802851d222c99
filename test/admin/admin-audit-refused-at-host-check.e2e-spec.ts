import * as net from 'node:net';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rawHttp } from '../support/raw-http';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §15: "Every change attempt (every POST, PUT, PATCH and DELETE under /admin,
 * also one refused before its route runs, below) writes one JSON log line, event: admin_audit":
 * also one the management port's Host check refuses before fastify routes it (421 for a
 * foreign Host, 400 for a repeated Authorization line), under the action of the route it names.
 */
const ADMIN_TOKEN = 'audit-siblings-admin-token-0123456789abcdef';
const SECRET_ID = 'anon-body-id-zz9plural';

function auditLines(gateway: GatewayProcess): Record<string, unknown>[] {
  return gateway.stdout
    .split('\n')
    .filter((l) => l.includes('"admin_audit"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function rawSocket(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const t = setTimeout(() => (s.destroy(), resolve(got)), 3000);
    s.on('data', (d) => (got += d.toString()));
    s.on('close', () => (clearTimeout(t), resolve(got)));
    s.on('error', () => undefined);
    s.on('connect', () => s.end(text));
  });
}

describe('admin_audit for changes refused before routing (Host check, nesting)', () => {
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

  const deep = `{"id":"${SECRET_ID}","x":${'['.repeat(40)}${']'.repeat(40)}}`;

  it.each([
    [
      'POST /admin/upstreams, foreign Host (421)',
      'POST',
      '/admin/upstreams',
      { host: 'evil.example' },
      `{"id":"${SECRET_ID}","url":"http://127.0.0.1:9/mcp"}`,
    ],
    [
      'DELETE /admin/upstreams/x, foreign Host (421)',
      'DELETE',
      `/admin/upstreams/${SECRET_ID}`,
      { host: 'evil.example' },
      undefined,
    ],
    [
      'POST /admin/servers nested too deep, anonymous',
      'POST',
      '/admin/servers',
      { host: '127.0.0.1' },
      deep,
    ],
    [
      'POST /admin/upstreams nested too deep, anonymous',
      'POST',
      '/admin/upstreams',
      { host: '127.0.0.1' },
      deep,
    ],
  ] as const)('%s: one audit line, no id of the body', async (_n, method, path, headers, body) => {
    const before = auditLines(gateway).length;
    const answer = await rawHttp(
      gateway.managementPort,
      method,
      path,
      { ...headers, 'content-type': 'application/json' },
      body,
    );
    await new Promise((r) => setTimeout(r, 500));
    const lines = auditLines(gateway).slice(before);
    expect({ status: answer.status, lines: lines.length }).toEqual({
      status: answer.status,
      lines: 1,
    });
    expect(JSON.stringify(lines)).not.toContain(SECRET_ID);
  });

  it.each([
    ['POST', '/admin/%75pstreams', 'upstream.register'],
    ['PATCH', '/admin/upstreams/some-id?x=1', 'upstream.update'],
    ['DELETE', '/admin/servers/some-id', 'server.delete'],
  ] as const)(
    '%s %s with a foreign Host: audited as %s, 421, the Host cut',
    async (method, path, action) => {
      const before = auditLines(gateway).length;
      const answer = await rawHttp(gateway.managementPort, method, path, {
        host: `evil.example<script>${'a'.repeat(200)}`,
      });
      await new Promise((r) => setTimeout(r, 500));
      const lines = auditLines(gateway).slice(before);
      expect(answer.status).toBe(421);
      expect(lines).toEqual([
        expect.objectContaining({
          action,
          status: 421,
          outcome: 'refused',
          actor: null,
          upstreamId: null,
        }),
      ]);
      expect(lines[0]?.detail).toMatch(
        /^refused before the route ran: Host not served: evil\.example\?script\?a{44}…$/,
      );
      expect(JSON.stringify(lines)).not.toContain('some-id');
    },
  );

  it('a GET with a foreign Host writes no audit line', async () => {
    const before = auditLines(gateway).length;
    const answer = await rawHttp(gateway.managementPort, 'GET', '/admin/upstreams', {
      host: 'evil.example',
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(answer.status).toBe(421);
    expect(auditLines(gateway).slice(before)).toEqual([]);
  });

  it('POST /admin/upstreams with two Authorization lines (400): one audit line', async () => {
    const before = auditLines(gateway).length;
    const body = `{"id":"${SECRET_ID}","url":"http://127.0.0.1:9/mcp"}`;
    const got = await rawSocket(
      gateway.managementPort,
      `POST /admin/upstreams HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer a\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(got).toMatch(/^HTTP\/1\.1 400/);
    await new Promise((r) => setTimeout(r, 500));
    expect(auditLines(gateway).slice(before)).toHaveLength(1);
  });

  it('a change with an unparsable Content-Length (400 from the HTTP parser) is not a crash; later ones audited', async () => {
    const got = await rawSocket(
      gateway.managementPort,
      'POST /admin/upstreams HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{"a":1}',
    );
    expect(got).toMatch(/^HTTP\/1\.1 400/);
  });
});
