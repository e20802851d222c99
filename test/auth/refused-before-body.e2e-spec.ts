import { connect, type Socket } from 'node:net';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
/** The declared body: the /mcp limit (4 MiB); a test sends a few KiB of it, then waits. */
const DECLARED = 4 * 1024 * 1024;
const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'ins.quote', arguments: {} },
});

/**
 * A raw POST /mcp that declares `declared` bytes and sends `first` of them: resolves with the
 * status line of the answer once one comes, and lets the test send the rest.
 */
function partialPost(
  url: string,
  headers: Record<string, string>,
  first: string,
  declared: number,
): { readonly status: Promise<string>; readonly socket: Socket; readonly text: () => string } {
  const { hostname, port, host } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  const status = new Promise<string>((resolve, reject) => {
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      const end = received.indexOf('\r\n');
      if (end >= 0) resolve(received.slice(0, end));
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed without an answer: ${received}`)));
  });
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${declared}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `\r\n${first}`,
  );
  return { status, socket, text: () => received };
}

/**
 * A POST to /mcp is authenticated from its headers before its body is read (docs/security.md
 * "Every request authenticated", operations §13): one its headers refuse — no token, another
 * scheme, a token that does not verify, an expired one — is answered 401 while its body is
 * still coming (here: never completed), so a caller without a valid token never has the gateway
 * hold a body of up to 4 MiB; one with a valid token has its body read and is served. Before,
 * the whole body was read first: 100 such callers held ~400 MB. Runs on both /mcp listeners
 * (jest.config.js).
 */
describe('POST /mcp with mcp.auth: refused from its headers before its body is read', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let gateway: GatewayProcess;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ins', service, 'ins.')]),
        auth: jwtAuthConfig(as, RESOURCE),
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await gateway?.stop();
    await Promise.all([as?.stop(), service?.stop()]);
  });

  it.each([
    ['no Authorization', () => Promise.resolve({})],
    ['another scheme', () => Promise.resolve({ authorization: 'Basic dXNlcjpwYXNz' })],
    ['a bearer that is no token', () => Promise.resolve({ authorization: 'Bearer garbage' })],
    [
      'an expired token (verified against the key set first)',
      async () => ({
        authorization: `Bearer ${await as.sign({
          iss: as.issuer,
          aud: RESOURCE,
          sub: 'late',
          scope: 'mcp',
          iat: Math.floor(Date.now() / 1000) - 600,
          exp: Math.floor(Date.now() / 1000) - 300,
        })}`,
      }),
    ],
  ])('%s: 401 with WWW-Authenticate while the body is incomplete', async (_kind, headers) => {
    const post = partialPost(gateway.mcpUrl, await headers(), 'x'.repeat(8192), DECLARED);
    sockets.push(post.socket);
    expect(await post.status).toBe('HTTP/1.1 401 Unauthorized');
    expect(post.text().toLowerCase()).toContain('www-authenticate: bearer');
    // the rest of the body may still come: it is discarded, and the answer stands
    post.socket.write('y'.repeat(64 * 1024));
  });

  it('a valid token: the body is read and the call served, also when it comes after a pause', async () => {
    const token = await as.sign({
      iss: as.issuer,
      aud: RESOURCE,
      sub: 'alice',
      scope: 'mcp',
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const post = partialPost(
      gateway.mcpUrl,
      { authorization: `Bearer ${token}` },
      CALL.slice(0, 10),
      Buffer.byteLength(CALL),
    );
    sockets.push(post.socket);
    await new Promise((resolve) => setTimeout(resolve, 300));
    post.socket.write(CALL.slice(10));
    expect(await post.status).toBe('HTTP/1.1 200 OK');
  });
});
