import { connect } from 'node:net';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { rawHttp, type RawHttpAnswer } from '../support/raw-http';
import { TestToolService } from '../support/tool-service';

/**
 * The management port's Host check (docs/security.md "The management port",
 * docs/operations.md §12): a DNS-rebinding page in an operator's browser names a host of its
 * own (`Host: attacker.example:9090`), so every route answers only IP literals, loopback
 * names and `mcp.management.allowedHosts`; any other name gets 421 with a JSON body and
 * nothing of the gateway's state.
 */

const ADMIN_TOKEN = 'mgmt-host-e2e-admin-7d20c4';

/** Every route of the management port, and paths no route has. */
const ROUTES: readonly (readonly [string, string])[] = [
  ['GET', '/actuator/catalog/tools'],
  ['GET', '/actuator/catalog/history'],
  ['GET', '/actuator/toolBundles'],
  ['GET', '/actuator/upstreams'],
  ['GET', '/actuator/prometheus'],
  ['GET', '/actuator/health/liveness'],
  ['GET', '/actuator/health/readiness'],
  ['GET', '/console'],
  ['GET', '/console/settings'],
  ['GET', '/console/assets/main.js'],
  ['GET', '/admin/upstreams'],
  ['GET', '/admin/upstreams/repo'],
  ['POST', '/admin/upstreams'],
  ['PATCH', '/admin/upstreams/repo'],
  ['DELETE', '/admin/upstreams/repo'],
  ['OPTIONS', '/console'],
  ['GET', '/no-such-route'],
  ['GET', '/mcp'],
];

/** One request with exactly this Host (and optional bearer); JSON body for POST/PATCH. */
function send(
  port: number,
  method: string,
  path: string,
  host: string,
  token?: string,
): Promise<RawHttpAnswer> {
  const body =
    method === 'POST' || method === 'PATCH' ? '{"id":"x","url":"http://x/mcp"}' : undefined;
  return rawHttp(
    port,
    method,
    path,
    {
      host,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body,
  );
}

/** `text` written as it is on a plain socket; what came back until the server closed. */
function rawText(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(text);
  });
}

/** An HTTP/1.0 request without any Host header, over a plain socket. */
function withoutHost(port: number, path: string): Promise<string> {
  return rawText(port, `GET ${path} HTTP/1.0\r\n\r\n`);
}

function expectRefusal(answer: RawHttpAnswer, what: string): void {
  expect([what, answer.status]).toEqual([what, 421]);
  expect([what, answer.headers['content-type']]).toEqual([what, 'application/json; charset=utf-8']);
  expect([what, answer.json]).toEqual([
    what,
    {
      statusCode: 421,
      error: 'Misdirected Request',
      message: expect.stringContaining('mcp.management.allowedHosts'),
    },
  ]);
}

describe('management port without an admin credential or allowedHosts: IP literals and loopback names only', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.secret-tool' })]));
    repo = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')], {
        upstreams: [upstream('repo', repo.url)],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
    await service?.stop();
  });

  it('Host: attacker.example:9090 gets 421 on every route, with nothing of the catalog or the upstream URLs', async () => {
    for (const [method, path] of ROUTES) {
      const answer = await send(gateway.managementPort, method, path, 'attacker.example:9090');
      expectRefusal(answer, `${method} ${path}`);
      expect(answer.text).not.toContain('shop.secret-tool');
      expect(answer.text).not.toContain(repo.url);
      expect(answer.text).not.toContain(String(repo.port));
    }
    // the same name with the real port, without a port, in capitals, fully qualified
    for (const host of [
      `attacker.example:${gateway.managementPort}`,
      'attacker.example',
      'ATTACKER.example:9090',
      'attacker.example.:9090',
      'localhost.attacker.example:9090',
      '127.0.0.1.nip.io:9090',
    ]) {
      expectRefusal(
        await send(gateway.managementPort, 'GET', '/actuator/catalog/tools', host),
        host,
      );
    }
  });

  it('serves IP literals (v4 and v6, with or without a port) and loopback names, as probes and Prometheus send them', async () => {
    const port = gateway.managementPort;
    for (const host of [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      '10.42.3.17:9090',
      '10.42.3.17',
      `[::1]:${port}`,
      '[::1]',
      '[fd00::17]:9090',
      `localhost:${port}`,
      'localhost',
      'console.localhost:9090',
    ]) {
      const answer = await send(port, 'GET', '/actuator/catalog/tools', host);
      expect([host, answer.status]).toEqual([host, 200]);
      expect(answer.text).toContain('shop.secret-tool');
    }
    expect((await send(port, 'GET', '/actuator/health/liveness', '10.42.3.17:9090')).status).toBe(
      200,
    );
    expect((await send(port, 'GET', '/console', '10.42.3.17:9090')).status).toBe(200);
    // without an admin credential /admin/upstreams reads are open (operations §15), by IP only
    const admin = await send(port, 'GET', '/admin/upstreams', `127.0.0.1:${port}`);
    expect(admin.status).toBe(200);
    expect(admin.text).toContain(repo.url);
  });

  it('serves an HTTP/1.0 request without Host (no browser sends one)', async () => {
    expect(await withoutHost(gateway.managementPort, '/actuator/health/liveness')).toMatch(
      /^HTTP\/1\.[01] 200 /,
    );
  });

  it('refuses a target in absolute form whose authority is not served, whatever Host says (RFC 9112 §3.2.2), and serves one whose authority and Host both are', async () => {
    const served: string[] = [];
    for (const path of [
      '/actuator/catalog/tools',
      '/actuator/upstreams',
      '/admin/upstreams',
      '/console',
    ]) {
      for (const head of [
        `GET http://attacker.example${path} HTTP/1.1\r\nHost: 127.0.0.1`,
        `GET http://attacker.example:9090${path} HTTP/1.1\r\nHost: localhost`,
        `GET https://ATTACKER.example${path} HTTP/1.1\r\nHost: 127.0.0.1`,
        `GET http://attacker.example${path} HTTP/1.0`,
        // the other way round: a served authority does not carry a foreign Host
        `GET http://127.0.0.1${path} HTTP/1.1\r\nHost: attacker.example`,
      ]) {
        const text = await rawText(gateway.managementPort, `${head}\r\nConnection: close\r\n\r\n`);
        if (!/^HTTP\/1\.[01] 421 /.test(text) || text.includes('shop'))
          served.push(`${head}: ${text.slice(0, 12)}`);
      }
    }
    expect(served).toEqual([]);
    for (const head of [
      `GET ftp://127.0.0.1/actuator/toolBundles HTTP/1.1\r\nHost: 127.0.0.1`,
      `GET http://user@127.0.0.1/actuator/toolBundles HTTP/1.1\r\nHost: 127.0.0.1`,
      `GET http:///actuator/toolBundles HTTP/1.1\r\nHost: 127.0.0.1`,
    ]) {
      const text = await rawText(gateway.managementPort, `${head}\r\nConnection: close\r\n\r\n`);
      expect([head, text.slice(0, 12), text.includes('shop')]).toEqual([
        head,
        'HTTP/1.1 400',
        false,
      ]);
    }
    const ok = await rawText(
      gateway.managementPort,
      `GET http://localhost:${gateway.managementPort}/actuator/toolBundles HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200 /);
    expect(ok).toContain('shop');
  });

  it('refuses two Host lines, or two Authorization lines, with 400 whichever comes first: only the first would be read', async () => {
    for (const headers of [
      ['Host: 127.0.0.1', 'Host: attacker.example'],
      ['Host: attacker.example', 'Host: 127.0.0.1'],
      ['Host: localhost', 'host: attacker.example'],
      ['Host: 127.0.0.1', 'Authorization: Bearer a', 'Authorization: Bearer b'],
    ]) {
      const text = await rawText(
        gateway.managementPort,
        `GET /actuator/catalog/tools HTTP/1.1\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`,
      );
      expect([headers, text.slice(0, 12), text.includes('shop.secret-tool')]).toEqual([
        headers,
        'HTTP/1.1 400',
        false,
      ]);
    }
  });

  it('refuses a malformed Host', async () => {
    for (const host of [
      'a b',
      'user@127.0.0.1',
      '127.0.0.1:99999',
      '[::1',
      '.localhost',
      'a..localhost',
      '.',
    ]) {
      const answer = await send(gateway.managementPort, 'GET', '/actuator/toolBundles', host);
      // node:http itself may answer 400 to a Host it cannot read; never 200
      expect([host, answer.status === 421 || answer.status === 400]).toEqual([host, true]);
      expect(answer.text).not.toContain('shop');
    }
  });

  it('answers a write without an admin credential with the 403 of /admin, naming no URL', async () => {
    const host = `127.0.0.1:${gateway.managementPort}`;
    for (const [method, path] of [
      ['POST', '/admin/upstreams'],
      ['PATCH', '/admin/upstreams/repo'],
      ['DELETE', '/admin/upstreams/repo'],
    ] as const) {
      const answer = await send(gateway.managementPort, method, path, host);
      expect([method, answer.status]).toEqual([method, 403]);
      expect(answer.text).not.toContain(repo.url);
      expect(answer.text).not.toContain(String(repo.port));
    }
  });
});

describe('management port with mcp.management.allowedHosts and MCP_ADMIN_TOKEN (node:http /mcp listener)', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    repo = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', service, 'shop.')], {
          upstreams: [upstream('repo', repo.url)],
        }),
        management: { allowedHosts: ['gw-mgmt.example.com', 'ops.example:9443'] },
      },
      // the management listener is the same whichever listener serves /mcp
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, MCP_HTTP_SERVER: 'node' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
    await service?.stop();
  });

  it('serves the listed names (a bare name on any port, name:port on that port only)', async () => {
    const port = gateway.managementPort;
    for (const host of [
      'gw-mgmt.example.com',
      `gw-mgmt.example.com:${port}`,
      'GW-MGMT.Example.com:443',
      'ops.example:9443',
    ]) {
      const answer = await send(port, 'GET', '/actuator/catalog/tools', host);
      expect([host, answer.status]).toEqual([host, 200]);
    }
    const admin = await send(port, 'GET', '/admin/upstreams', 'gw-mgmt.example.com', ADMIN_TOKEN);
    expect(admin.status).toBe(200);
    expect(admin.text).toContain(repo.url);
    for (const host of [
      'ops.example:9090',
      'ops.example',
      'sub.gw-mgmt.example.com',
      'attacker.example:9090',
    ])
      expectRefusal(await send(port, 'GET', '/console', host), host);
  });

  it('refuses another name even with the admin token', async () => {
    for (const [method, path] of ROUTES) {
      const answer = await send(
        gateway.managementPort,
        method,
        path,
        'attacker.example:9090',
        ADMIN_TOKEN,
      );
      expectRefusal(answer, `${method} ${path}`);
      expect(answer.text).not.toContain(repo.url);
    }
  });

  it('/admin refusals without a valid credential name no upstream URL', async () => {
    const host = `127.0.0.1:${gateway.managementPort}`;
    for (const token of [undefined, 'wrong-token']) {
      for (const [method, path] of ROUTES.filter(([, p]) => p.startsWith('/admin/'))) {
        const answer = await send(gateway.managementPort, method, path, host, token);
        expect([method, path, token, answer.status]).toEqual([method, path, token, 401]);
        expect(answer.text).not.toContain(repo.url);
        expect(answer.text).not.toContain(String(repo.port));
      }
    }
    // bodies refused before the route ran (not JSON, not a JSON type) say nothing of upstreams
    for (const [type, body] of [
      ['application/json', '{not json'],
      ['text/plain', 'hello'],
    ] as const) {
      const answer = await rawHttp(
        gateway.managementPort,
        'POST',
        '/admin/upstreams',
        { host, 'content-type': type },
        body,
      );
      expect([type, answer.status >= 400 && answer.status < 500]).toEqual([type, true]);
      expect(answer.text).not.toContain(repo.url);
    }
  });
});

describe('boot refusal for a malformed mcp.management.allowedHosts entry', () => {
  it('stops the boot with one message naming the entry', async () => {
    const gateway = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([
          bundle(
            'svc',
            { manifestUrl: 'http://127.0.0.1:9/m', baseEndpoint: 'http://127.0.0.1:9/mcp' },
            'svc.',
          ),
        ]),
        management: { allowedHosts: ['gw.example', '*.example.com'] },
      },
    });
    expect(await gateway.waitForExit()).toBe(1);
    expect(gateway.stderr).toContain(
      'mcp.management.allowedHosts[1]: must be a host name "name", "name:port" or "name:*"',
    );
    expect(gateway.stderr).toContain('The gateway did not start.');
  });
});
