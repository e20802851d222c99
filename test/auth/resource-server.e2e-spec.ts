import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestAuthorizationServer, type MintRequest } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/** The gateway's canonical resource URI (RFC 8707): the audience its tokens must carry. */
const RESOURCE = 'https://gateway.test/mcp';
const METADATA_URL = 'https://gateway.test/.well-known/oauth-protected-resource/mcp';
const V = '2026-07-28';

const modern = (method: string, params: Record<string, unknown>, token?: string) =>
  postRaw(
    gateway.mcpUrl,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
  );

let as: TestAuthorizationServer;
let otherIssuer: TestAuthorizationServer;
let claims: TestToolService;
let billing: TestToolService;
let gateway: GatewayProcess;
/** Every token this suite handed to the gateway: none may appear in its log. */
const issued: string[] = [];

async function token(request: MintRequest, server = as): Promise<string> {
  const { access_token } = await server.mint({ resource: RESOURCE, ...request });
  issued.push(access_token);
  return access_token;
}

const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

async function toolNames(t: string): Promise<string[]> {
  const answer = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(t));
  expect(answer.status).toBe(200);
  return (answer.json.result.tools as { name: string }[]).map((x) => x.name);
}

/**
 * docs/operations.md §13 against a real authorization server (oidc-provider): the gateway verifies
 * every request's token (JWT via JWKS, opaque via introspection), refuses with the RFC 6750
 * answers, serves RFC 9728 metadata, and shows each caller only what `mcp.access` grants it.
 */
describe('the /mcp resource server (mcp.auth jwt, mcp.access)', () => {
  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp admin other' } },
      defaultResource: RESOURCE,
    });
    otherIssuer = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    claims = await TestToolService.start(
      manifest('claims', [tool({ name: 'claims.open' }), tool({ name: 'claims.close' })]),
    );
    billing = await TestToolService.start(
      manifest('billing', [tool({ name: 'billing.invoice' }), tool({ name: 'billing.refund' })]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([
          bundle('claims', claims, 'claims.'),
          bundle('billing', billing, 'billing.'),
        ]),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          requiredScopes: ['mcp'],
          algorithms: ['ES256'],
          clockSkewSeconds: 0,
          introspectionUrl: as.introspectionUrl,
          introspectionClientId: 'gateway-test',
          introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
        },
        access: {
          rules: [
            { match: { claim: 'groups', value: 'claims-team' }, sources: ['claims'] },
            { match: { subject: 'bob' }, tools: ['billing.invoice'] },
            { match: { scope: 'admin' }, sources: ['claims', 'billing'] },
          ],
        },
      },
      env: { TEST_INTROSPECTION_SECRET: 'gateway-test-secret', LOG_LEVEL: 'debug' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), otherIssuer?.stop(), claims?.stop(), billing?.stop()]);
  });

  it('no token: 401 with WWW-Authenticate Bearer resource_metadata and no error code', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/list', {});
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${METADATA_URL}"`,
    );
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    expect(init.status).toBe(401);
    expect((await modern('tools/list', {})).status).toBe(401);
  });

  it.each([
    [
      'expired',
      {
        subject: 'alice',
        exp: Math.floor(Date.now() / 1000) - 60,
        iat: Math.floor(Date.now() / 1000) - 120,
      },
      'expired',
    ],
    [
      'for another audience',
      { subject: 'alice', resource: 'https://other.test/mcp' },
      'not issued for this resource',
    ],
  ] as const)('a token %s: 401 error="invalid_token"', async (_name, request, reason) => {
    const t = await token(request);
    const answer = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(t));
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token"/);
    expect(challenge).toContain(reason);
    expect(answer.json).toMatchObject({ error: 'invalid_token' });
  });

  it('a token of another issuer, and garbage: 401 invalid_token', async () => {
    const foreign = await token(
      { subject: 'alice', claims: { groups: ['claims-team'] } },
      otherIssuer,
    );
    for (const t of [foreign, 'not-a-jwt.at.all', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.']) {
      const answer = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(t));
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('a valid token without a required scope: 403 insufficient_scope with scope=', async () => {
    const t = await token({
      subject: 'alice',
      scope: 'other',
      claims: { groups: ['claims-team'] },
    });
    const answer = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(t));
    expect(answer.status).toBe(403);
    const challenge = answer.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="mcp"');
    expect(challenge).toContain(`resource_metadata="${METADATA_URL}"`);
  });

  it('serves the protected-resource metadata at both RFC 9728 paths on the MCP port', async () => {
    const base = gateway.mcpUrl.replace(/\/mcp$/, '');
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: RESOURCE,
        authorization_servers: [as.issuer],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
      });
    }
    expect((await fetch(`${base}/.well-known/oauth-protected-resource/other`)).status).toBe(404);
  });

  it('two callers see different lists from one replica at the same moment', async () => {
    const alice = await token({
      subject: 'alice',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    const bob = await token({ subject: 'bob', scope: 'mcp' });
    const admin = await token({ subject: 'carol', scope: 'mcp admin' });
    const nobody = await token({ subject: 'dave', scope: 'mcp', claims: { groups: ['sales'] } });
    const lists = await Promise.all(
      [alice, bob, admin, nobody, alice, bob].map((t) => toolNames(t)),
    );
    expect(lists).toEqual([
      ['claims.close', 'claims.open'],
      ['billing.invoice'],
      ['billing.invoice', 'billing.refund', 'claims.close', 'claims.open'],
      [],
      ['claims.close', 'claims.open'],
      ['billing.invoice'],
    ]);
  });

  it('a denied tool is answered exactly like an unknown one, after the same refresh of the sources', async () => {
    const alice = await token({
      subject: 'alice',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    const pulls = (): number =>
      billing.manifestRequests().length + claims.manifestRequests().length;
    const beforeDenied = pulls();
    const denied = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'billing.refund', arguments: {} },
      bearer(alice),
    );
    const deniedPulls = pulls() - beforeDenied;
    expect(billing.toolRequests()).toHaveLength(0);
    const beforeUnknown = pulls();
    const unknown = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'billing.refunX', arguments: {} },
      bearer(alice),
    );
    // each waited for a refresh of every source (contract §8; docs/operations.md §13 "Access"):
    // the time of the answer does not tell a denied tool from an unknown one either
    expect([deniedPulls, pulls() - beforeUnknown]).toEqual([2, 2]);
    expect(denied.status).toBe(unknown.status);
    expect(denied.json.error.code).toBe(unknown.json.error.code);
    expect(denied.json.error.message.replace('billing.refund', 'NAME')).toBe(
      unknown.json.error.message.replace('billing.refunX', 'NAME'),
    );
    expect(denied.json.error.data).toEqual(unknown.json.error.data);
    expect(denied.headers.get('content-type')).toBe(unknown.headers.get('content-type'));
    // 2026-07-28: the same
    const d26 = await modern('tools/call', { name: 'billing.refund', arguments: {} }, alice);
    const u26 = await modern('tools/call', { name: 'billing.refunX', arguments: {} }, alice);
    expect([d26.status, d26.json.error.code]).toEqual([u26.status, u26.json.error.code]);
    // a granted tool is called
    const ok = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'claims.open', arguments: { a: 1 } },
      bearer(alice),
    );
    expect(ok.json.result.isError).toBeUndefined();
  });

  it('a changed grant takes effect on the very next tools/list and tools/call (claims of a new token)', async () => {
    const before = await token({
      subject: 'erin',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    expect(await toolNames(before)).toEqual(['claims.close', 'claims.open']);
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'claims.close', arguments: {} },
      bearer(before),
    );
    expect(call.json.result).toBeDefined();
    // the group is removed at the identity provider: her next token no longer carries it
    const after = await token({ subject: 'erin', scope: 'mcp', claims: { groups: [] } });
    expect(await toolNames(after)).toEqual([]);
    const denied = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'claims.close', arguments: {} },
      bearer(after),
    );
    expect(denied.json.error.message).toBe('Tool not found: claims.close');
  });

  it('an opaque token is introspected on every request: a revoked grant is refused on the very next call', async () => {
    const minted = await as.mint({
      subject: 'frank',
      resource: RESOURCE,
      scope: 'mcp',
      format: 'opaque',
      claims: { groups: ['claims-team'] },
    });
    issued.push(minted.access_token);
    expect(minted.access_token).not.toContain('.');
    expect(await toolNames(minted.access_token)).toEqual(['claims.close', 'claims.open']);
    await as.revokeGrant(minted.grantId);
    const list = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(minted.access_token));
    expect(list.status).toBe(401);
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'claims.open', arguments: {} },
      bearer(minted.access_token),
    );
    expect(call.status).toBe(401);
    expect(call.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('2026-07-28 lists and server/discover of a restricted caller are cacheScope private', async () => {
    const bob = await token({ subject: 'bob', scope: 'mcp' });
    const list = await modern('tools/list', {}, bob);
    expect(list.status).toBe(200);
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'billing.invoice',
    ]);
    expect(list.json.result.cacheScope).toBe('private');
    const discover = await modern('server/discover', {}, bob);
    expect(discover.json.result.cacheScope).toBe('private');
    expect(discover.json.result.capabilities).toEqual({ tools: { listChanged: true } });
    const nobody = await token({ subject: 'dave', scope: 'mcp' });
    expect((await modern('server/discover', {}, nobody)).json.result.capabilities).toEqual({});
  });

  it('official SDK clients (v1, v2, v2 in 2026 mode) call with a Bearer token', async () => {
    const alice = await token({
      subject: 'alice',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    const v1 = await connectV1(gateway.mcpUrl, bearer(alice));
    try {
      expect((await v1.listTools()).tools.map((t) => t.name)).toEqual([
        'claims.close',
        'claims.open',
      ]);
      const result = await v1.callTool({ name: 'claims.open', arguments: {} });
      expect(result.isError).toBeFalsy();
    } finally {
      await v1.close();
    }
    const v2 = await connectV2(gateway.mcpUrl, bearer(alice));
    try {
      expect((await v2.listTools()).tools).toHaveLength(2);
    } finally {
      await v2.close();
    }
    const auto = new V2Client(
      { name: 'e2e-auto', version: '1' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await auto.connect(
      new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), {
        requestInit: { headers: bearer(alice) },
      }),
    );
    try {
      expect((await auto.listTools()).tools.map((t) => t.name)).toEqual([
        'claims.close',
        'claims.open',
      ]);
    } finally {
      await auto.close();
    }
    // without a token the SDK client cannot even connect
    await expect(connectV1(gateway.mcpUrl)).rejects.toThrow();
  });

  it('a rotated signing key is picked up within a minute; a JWKS outage never blocks a known key', async () => {
    const known = await token({
      subject: 'alice',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    await as.setJwksDown(true);
    try {
      // a token the gateway has never seen, signed by a key it knows: verified while JWKS is down
      const fresh = await token({
        subject: 'alice',
        scope: 'mcp',
        claims: { groups: ['claims-team'], n: 1 },
      });
      expect((await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(fresh))).status).toBe(200);
    } finally {
      await as.setJwksDown(false);
    }
    await as.rotateKey();
    const rotated = await token({
      subject: 'alice',
      scope: 'mcp',
      claims: { groups: ['claims-team'] },
    });
    await waitFor(
      async () => (await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(rotated))).status === 200,
      60_000,
      () => 'a token signed by the rotated key was not accepted within a minute',
    );
    expect((await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(known))).status).toBe(200);
  }, 90_000);

  it('no token value appears anywhere in the gateway log of this suite', async () => {
    await gateway.stop();
    expect(issued.length).toBeGreaterThan(10);
    expect(gateway.output.length).toBeGreaterThan(0);
    for (const t of issued) {
      expect(gateway.output).not.toContain(t);
      // nor its signature part alone (a JWT's third segment) or the opaque value's tail
      expect(gateway.output).not.toContain(t.slice(-24));
    }
  });
});
