import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { corsHeaderNames, rawHttp, type RawHttpAnswer } from '../support/raw-http';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §8: Origin and Host on /mcp (MCP Streamable HTTP "Security Warning": servers
 * MUST validate Origin and answer 403 to an invalid one; DNS rebinding). Config
 * `mcp.http.allowedOrigins` (default none: any request carrying Origin is refused) and
 * `mcp.http.allowedHosts` (checked when set). CORS headers only for an allowed origin.
 */

const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
const CALL_ECHO = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'svc.echo', arguments: { text: 'hi' } },
});
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
});
const PREFLIGHT = (origin: string): Record<string, string> => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'content-type, mcp-session-id, mcp-protocol-version',
});

/** The 403 of a refused Origin or Host: a JSON-RPC error without id, and no CORS header. */
function expectForbidden(answer: RawHttpAnswer, about: 'Origin' | 'Host'): void {
  expect({ status: answer.status, cors: corsHeaderNames(answer) }).toEqual({
    status: 403,
    cors: [],
  });
  expect(answer.json).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: expect.stringContaining(about) },
  });
}

async function startService(): Promise<TestToolService> {
  return TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
}

describe('/mcp with the default mcp.http (no origin allowed, Host not checked)', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await startService();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { APP_PROFILE: 'staging' },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it.each(['/%6dcp', '/mcp#frag', 'http://evil.example/mcp', '/MCP', '/mcp/'])(
    'runs nothing for the request target %s with a foreign Origin (only "/mcp" is the endpoint)',
    async (target) => {
      const before = service.toolRequests().length;
      const answer = await rawHttp(
        gateway.mcpPort,
        'POST',
        target,
        { ...JSON_HEADERS, origin: 'http://evil.example' },
        CALL_ECHO,
      );
      expect([403, 404]).toContain(answer.status);
      expect(corsHeaderNames(answer)).toEqual([]);
      expect(service.toolRequests().length).toBe(before);
    },
  );

  it('answers POST /mcp with Origin: http://evil.example and a tools/call with 403; the Tool Service receives nothing', async () => {
    const before = service.toolRequests().length;
    const answer = await rawHttp(
      gateway.mcpPort,
      'POST',
      '/mcp',
      { ...JSON_HEADERS, origin: 'http://evil.example' },
      CALL_ECHO,
    );
    expectForbidden(answer, 'Origin');
    expect(service.toolRequests().length).toBe(before);
  });

  it('serves the same call without an Origin header (every non-browser client), with no CORS header', async () => {
    const answer = await rawHttp(gateway.mcpPort, 'POST', '/mcp', JSON_HEADERS, CALL_ECHO);
    expect(answer.status).toBe(200);
    expect(answer.json.result.isError).toBeUndefined();
    expect(corsHeaderNames(answer)).toEqual([]);
    expect(service.toolRequests('svc.echo').length).toBeGreaterThan(0);
  });

  it.each(['null', 'http://127.0.0.1', 'https://evil.example:8443', 'not an origin'])(
    'refuses Origin %p too, on initialize (variant: another origin form)',
    async (origin) => {
      const answer = await rawHttp(
        gateway.mcpPort,
        'POST',
        '/mcp',
        { ...JSON_HEADERS, origin },
        INITIALIZE,
      );
      expectForbidden(answer, 'Origin');
      expect(answer.headers['mcp-session-id']).toBeUndefined();
    },
  );

  it('refuses a preflight from any origin with 403 and no CORS header', async () => {
    const answer = await rawHttp(
      gateway.mcpPort,
      'OPTIONS',
      '/mcp',
      PREFLIGHT('http://evil.example'),
    );
    expectForbidden(answer, 'Origin');
  });

  it('does not check Host when allowedHosts is empty', async () => {
    const answer = await rawHttp(
      gateway.mcpPort,
      'POST',
      '/mcp',
      { ...JSON_HEADERS, host: 'evil.example:8080' },
      INITIALIZE,
    );
    expect(answer.status).toBe(200);
  });
});

describe('/mcp with allowed origins and hosts', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await startService();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('svc', service, 'svc.')]),
        http: {
          allowedOrigins: ['https://console.example', 'http://localhost:*'],
          allowedHosts: ['127.0.0.1:*', 'gw.example:8080'],
        },
      },
      env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('serves an allowed origin with Access-Control-Allow-Origin, Vary: Origin and the session id exposed', async () => {
    const answer = await rawHttp(
      gateway.mcpPort,
      'POST',
      '/mcp',
      { ...JSON_HEADERS, origin: 'https://console.example' },
      INITIALIZE,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'access-control-allow-origin': 'https://console.example',
      vary: 'Origin',
      'access-control-expose-headers': 'Mcp-Session-Id',
    });
    expect(answer.headers['mcp-session-id']).toEqual(expect.any(String));
  });

  it('runs the tool for an allowed origin on any port of "http://localhost:*"', async () => {
    const answer = await rawHttp(
      gateway.mcpPort,
      'POST',
      '/mcp',
      { ...JSON_HEADERS, origin: 'http://localhost:5173' },
      CALL_ECHO,
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.json.result.content[0].text)).toEqual({
      received: { text: 'hi' },
    });
    expect(answer.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('puts the CORS headers on error answers too, so a browser can read them (GET: 405, bad JSON: 400)', async () => {
    const origin = { origin: 'https://console.example' };
    const get = await rawHttp(gateway.mcpPort, 'GET', '/mcp', {
      accept: 'text/event-stream',
      ...origin,
    });
    const bad = await rawHttp(gateway.mcpPort, 'POST', '/mcp', { ...JSON_HEADERS, ...origin }, '{');
    for (const answer of [get, bad]) {
      expect(answer.headers['access-control-allow-origin']).toBe('https://console.example');
      expect(answer.headers.vary).toBe('Origin');
    }
    expect([get.status, bad.status, bad.json.error.code]).toEqual([405, 400, -32700]);
  });

  it('answers the preflight of an allowed origin with 204, methods, headers and max-age', async () => {
    const answer = await rawHttp(
      gateway.mcpPort,
      'OPTIONS',
      '/mcp',
      PREFLIGHT('https://console.example'),
    );
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(answer.headers['access-control-allow-origin']).toBe('https://console.example');
    expect(answer.headers['access-control-allow-methods']).toBe('POST, GET, DELETE, OPTIONS');
    expect(answer.headers['access-control-allow-headers']?.toString().split(', ')).toEqual(
      expect.arrayContaining([
        'content-type',
        'accept',
        'authorization',
        'mcp-session-id',
        'mcp-protocol-version',
        'mcp-method',
        'mcp-name',
        'last-event-id',
        'guid',
        'x-request-id',
        'employee-no',
        'virtual-employee-no',
      ]),
    );
    expect(Number(answer.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  it('refuses the preflight and the call of an origin not listed (another scheme of a listed host)', async () => {
    expectForbidden(
      await rawHttp(gateway.mcpPort, 'OPTIONS', '/mcp', PREFLIGHT('http://console.example')),
      'Origin',
    );
    const before = service.toolRequests().length;
    expectForbidden(
      await rawHttp(
        gateway.mcpPort,
        'POST',
        '/mcp',
        { ...JSON_HEADERS, origin: 'http://console.example' },
        CALL_ECHO,
      ),
      'Origin',
    );
    expect(service.toolRequests().length).toBe(before);
  });

  it('refuses Host: evil.example:8080 (DNS rebinding: the name resolves here, the Host says it is not ours) and runs no tool', async () => {
    const before = service.toolRequests().length;
    // What a rebinding page sends: its own name in Host and Origin. Host alone is enough.
    const variants: Record<string, string>[] = [
      { host: 'evil.example:8080' },
      { host: 'evil.example:8080', origin: 'http://evil.example:8080' },
      { host: 'evil.example:8080', origin: 'https://console.example' },
    ];
    for (const headers of variants) {
      expectForbidden(
        await rawHttp(gateway.mcpPort, 'POST', '/mcp', { ...JSON_HEADERS, ...headers }, CALL_ECHO),
        'Host',
      );
    }
    expect(service.toolRequests().length).toBe(before);
  });

  it('serves a listed Host: "gw.example:8080" exactly, "127.0.0.1:*" on any port; not gw.example on another port', async () => {
    const call = (host: string) =>
      rawHttp(gateway.mcpPort, 'POST', '/mcp', { ...JSON_HEADERS, host }, INITIALIZE);
    expect((await call('gw.example:8080')).status).toBe(200);
    expect((await call(`127.0.0.1:${gateway.mcpPort}`)).status).toBe(200);
    expectForbidden(await call('gw.example:9999'), 'Host');
  });
});

describe('/mcp in the local profile (config/application-local.yaml)', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // No MCP_CONFIG_FILE: the repository's profile files, as `npm start` reads them.
    gateway = await GatewayProcess.start({ env: { APP_PROFILE: 'local' } });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it.each(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://localhost'])(
    'allows Origin %p (localhost and 127.0.0.1, any port)',
    async (origin) => {
      const answer = await rawHttp(
        gateway.mcpPort,
        'POST',
        '/mcp',
        { ...JSON_HEADERS, origin },
        INITIALIZE,
      );
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
    },
  );

  it('refuses Origin: http://evil.example', async () => {
    expectForbidden(
      await rawHttp(
        gateway.mcpPort,
        'POST',
        '/mcp',
        { ...JSON_HEADERS, origin: 'http://evil.example' },
        INITIALIZE,
      ),
      'Origin',
    );
  });

  it('allows Host localhost and 127.0.0.1 on any port, and refuses another host name', async () => {
    const call = (host: string) =>
      rawHttp(gateway.mcpPort, 'POST', '/mcp', { ...JSON_HEADERS, host }, INITIALIZE);
    expect((await call(`localhost:${gateway.mcpPort}`)).status).toBe(200);
    expect((await call('127.0.0.1:1234')).status).toBe(200);
    expectForbidden(await call(`evil.example:${gateway.mcpPort}`), 'Host');
  });
});

describe('boot refusal for a malformed mcp.http entry', () => {
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
        http: { allowedOrigins: ['http://*.example.com'], allowedHosts: ['http://localhost'] },
      },
    });
    expect(await gateway.waitForExit()).toBe(1);
    expect(gateway.stderr).toContain('Invalid gateway configuration');
    expect(gateway.stderr).toContain('2 problems');
    expect(gateway.stderr).toContain('mcp.http.allowedOrigins[0]: must be an origin');
    expect(gateway.stderr).toContain('mcp.http.allowedHosts[0]: must be "host[:port]"');
    expect(gateway.stderr).toContain('The gateway did not start.');
  });
});
