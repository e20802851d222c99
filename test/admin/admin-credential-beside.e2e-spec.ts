import { stopAfterEach } from '../support/cleanup';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import { MODERN, envelopeMeta } from '../support/modern-rpc';
import { DEFAULT_TEST_CLIENT, TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';

/**
 * docs/security.md "The admin credential": /mcp keeps the admin credential from sources for
 * every request kind — in whatever header it comes, since a source's `forwardHeaders` passes a
 * header on as it came, and in whatever form, since `passthrough` passes Authorization on as it
 * came.
 */

const ADMIN = 'beside-admin-token-0123456789abcdef';
const SHORT_ADMIN = 'adm-5f3e1';

/** Every value the upstream received in this header, on any request. */
function received(up: V1Upstream, header: string): string[] {
  return up.requests
    .map((r) => r.headers[header])
    .filter((v): v is string => typeof v === 'string');
}

const call = (url: string, headers: Record<string, string>) =>
  rpc(url, 'tools/call', { name: 'repo__repo_search', arguments: { query: 'x' } }, headers);

describe('the static admin token in a header a source forwards', () => {
  let up: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('repo', up.url, { forwardHeaders: ['X-Mcp-Token'] })],
      }),
      env: { MCP_ADMIN_TOKEN: ADMIN },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it.each([
    `Bearer ${ADMIN}`,
    ADMIN,
    `token=${ADMIN}`,
    `a, ${ADMIN}`,
    `Bearer%20${ADMIN}`,
    Buffer.from(`Bearer ${ADMIN}`).toString('base64'),
    Buffer.from(`admin:${ADMIN}`).toString('base64url'),
  ])(
    'X-Mcp-Token %j: 401 as in Authorization, and the upstream never receives it',
    async (value) => {
      const res = await call(gateway.mcpUrl, { 'x-mcp-token': value });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('invalid_token');
      expect(res.headers.get('www-authenticate')).toContain('admin credential');
      expect(received(up, 'x-mcp-token').filter((v) => v.includes(ADMIN))).toEqual([]);
    },
  );

  it('the same in a 2026-07-28 request and on GET /mcp', async () => {
    const res = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'repo__repo_search',
        'x-mcp-token': ADMIN,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'repo__repo_search',
          arguments: { query: 'x' },
          _meta: envelopeMeta({}),
        },
      }),
    });
    expect(res.status).toBe(401);
    const get = await fetch(gateway.mcpUrl, {
      headers: { accept: 'text/event-stream', 'x-mcp-token': `Bearer ${ADMIN}` },
    });
    expect(get.status).toBe(401);
    expect(received(up, 'x-mcp-token').filter((v) => v.includes(ADMIN))).toEqual([]);
  });

  it('control: another value of the header is served and forwarded', async () => {
    const res = await call(gateway.mcpUrl, { 'x-mcp-token': 'tenant-7' });
    expect(res.status).toBe(200);
    expect(res.json.result).toBeDefined();
    expect(received(up, 'x-mcp-token')).toContain('tenant-7');
  });
});

describe('a short static admin token in any form of Authorization', () => {
  let up: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('repo', up.url, { authorization: { mode: 'passthrough' } })],
      }),
      env: {
        MCP_ADMIN_TOKEN: SHORT_ADMIN,
        APP_PROFILE: 'staging',
        MCP_SESSION_KEYS: TEST_SESSION_KEYS,
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it.each([
    `Bearer ${SHORT_ADMIN}`,
    `Bearer Bearer ${SHORT_ADMIN}`,
    `Token ${SHORT_ADMIN}`,
    `Bearer ${SHORT_ADMIN} x`,
    `Token token="${SHORT_ADMIN}"`,
    `Bearer%20${SHORT_ADMIN}`,
    `Token (${SHORT_ADMIN})`,
    `k=${SHORT_ADMIN}&t=1`,
    `[${SHORT_ADMIN}]`,
  ])('Authorization %j: 401, and a passthrough upstream never receives it', async (value) => {
    const res = await call(gateway.mcpUrl, { authorization: value });
    expect(res.status).toBe(401);
    expect(received(up, 'authorization').filter((v) => v.includes(SHORT_ADMIN))).toEqual([]);
  });

  it('control: a value that only contains the short token inside a word passes on', async () => {
    const res = await call(gateway.mcpUrl, { authorization: `Bearer x${SHORT_ADMIN}y` });
    expect(res.status).toBe(200);
    expect(received(up, 'authorization')).toContain(`Bearer x${SHORT_ADMIN}y`);
  });
});

describe('a JWT with the admin scope in a header a source forwards (mcp.auth jwt)', () => {
  const RESOURCE = 'https://gateway.test/mcp';
  let as: TestAuthorizationServer;
  let up: V1Upstream;
  const track = stopAfterEach();

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp mcp:admin' } },
      defaultResource: RESOURCE,
    });
    up = await V1Upstream.start();
  });

  afterAll(async () => {
    await Promise.all([as?.stop(), up?.stop()]);
  });

  it('the call is served and the upstream gets every header but that one; a token without the scope is forwarded', async () => {
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([], {
            upstreams: [upstream('repo', up.url, { forwardHeaders: ['X-Mcp-Token'] })],
          }),
          auth: {
            mode: 'jwt',
            issuer: as.issuer,
            audience: RESOURCE,
            jwksUrl: as.jwksUrl,
            algorithms: ['ES256'],
          },
        },
        env: { MCP_UPSTREAM_SECRET_EXCHANGE: DEFAULT_TEST_CLIENT.client_secret },
        waitReady: true,
      }),
    );
    const caller = (await as.mint({ subject: 'bob', scope: 'mcp' })).access_token;
    const operator = (await as.mint({ subject: 'ops-alice', scope: 'mcp mcp:admin' })).access_token;

    const before = up.requests.length;
    const res = await call(gateway.mcpUrl, {
      authorization: `Bearer ${caller}`,
      'x-mcp-token': `Bearer ${operator}`,
      'x-other': 'kept',
    });
    expect(res.status).toBe(200);
    expect(res.json.result).toBeDefined();
    const sent = up.requests.slice(before).filter((r) => r.rpcMethod === 'tools/call');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers['x-mcp-token']).toBeUndefined();

    // wrapped in a pair, brackets, a path, percent- or base64-encoded, or in an Mcp-Param-*
    // header (which a tool's x-mcp-header parameters pass on): left out all the same
    for (const [name, value] of [
      ['x-mcp-token', `token=${operator}&tenant=7`],
      ['x-mcp-token', `(${operator})`],
      ['x-mcp-token', `/session/${operator}`],
      ['x-mcp-token', `Bearer%20${operator}`],
      ['x-mcp-token', Buffer.from(`Bearer ${operator}`).toString('base64')],
      ['mcp-param-query', `(${operator})`],
    ] as const) {
      const from = up.requests.length;
      const wrapped = await call(gateway.mcpUrl, {
        authorization: `Bearer ${caller}`,
        [name]: value,
      });
      expect(wrapped.status).toBe(200);
      const leaked = up.requests
        .slice(from)
        .map((r) => String(r.headers[name] ?? ''))
        .filter(
          (v) =>
            v.includes(operator) ||
            Buffer.from(v, 'base64').toString().includes(operator) ||
            decodeURIComponent(v).includes(operator),
        );
      expect({ name, value, leaked }).toEqual({ name, value, leaked: [] });
    }

    const plain = await call(gateway.mcpUrl, {
      authorization: `Bearer ${caller}`,
      'x-mcp-token': `Bearer ${caller}`,
    });
    expect(plain.status).toBe(200);
    expect(received(up, 'x-mcp-token')).toContain(`Bearer ${caller}`);
  });
});
