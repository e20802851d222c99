import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { IntrospectionServer } from '../support/introspection-server';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc, type RawAnswer } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** The gateway's canonical resource URI (RFC 8707): the audience its tokens must carry. */
const RESOURCE = 'https://gateway.test/mcp';
const V = '2026-07-28';
const YEAR = 365 * 24 * 3600;

let as: TestAuthorizationServer;
let introspection: IntrospectionServer;
let service: TestToolService;
let gateway: GatewayProcess;

const now = (): number => Math.floor(Date.now() / 1000);
const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

/** Access-token claims as the provider would issue them for `sub`, overridable. */
const claims = (extra: Record<string, unknown>): Record<string, unknown> => ({
  iss: as.issuer,
  aud: RESOURCE,
  scope: 'mcp mcp:admin',
  iat: now(),
  exp: now() + 600,
  ...extra,
});

/** A 2025 request (no session needed for tools/list and tools/call). */
const legacy = (method: string, params: Record<string, unknown>, token: string) =>
  rpc(gateway.mcpUrl, method, params, bearer(token));

/** A stateless 2026-07-28 request. */
const modern = (method: string, params: Record<string, unknown>, token: string) =>
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
      ...bearer(token),
    },
  );

/** A 401 invalid_token with the description given, as RFC 6750 §3 words it. */
function expectInvalidToken(answer: RawAnswer, description: string): void {
  expect(answer.status).toBe(401);
  expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
  expect(answer.json).toEqual({ error: 'invalid_token', error_description: description });
}

/** The audit lines of the gateway's stdout (docs/operations.md §14). */
function auditLines(): Record<string, unknown>[] {
  return gateway.stdout
    .split('\n')
    .filter((line) => line.includes('"audit":"tools/call"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const echo = { name: 'ops.echo', arguments: {} };

/**
 * Token checks of the resource server (docs/security.md "Mode jwt"): every JWT needs `exp`
 * (RFC 9068 §2.2), an `iat` not ahead of now beyond the skew, a `typ` from
 * `mcp.auth.tokenTypes` (default at+jwt and JWT) and no ID-token-only claim; an introspection
 * answer needs `aud`; and the caller key is namespaced (`sub:` / `client:`), so a client id
 * equal to a user's `sub` neither drains that user's rate-limit bucket nor is audited as them.
 * Tokens are issued and signed by a real oidc-provider; the shapes it never issues itself are
 * signed with its own key (TestAuthorizationServer.sign).
 */
describe('token checks (mcp.auth jwt): exp, iat, typ, ID tokens, introspection aud, caller key', () => {
  beforeAll(async () => {
    [as, introspection, service] = await Promise.all([
      TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp mcp:admin' } },
        defaultResource: RESOURCE,
      }),
      IntrospectionServer.start(),
      TestToolService.start(manifest('ops', [tool({ name: 'ops.echo' })])),
    ]);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('ops', service, 'ops.')]),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          requiredScopes: ['mcp'],
          algorithms: ['ES256'],
          introspectionUrl: introspection.url,
          introspectionClientId: 'gateway-test',
          introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
        },
        // small, slow-refilling buckets: whose bucket a request drains is visible at once
        rateLimits: { perSubject: { capacity: 3, refillPerSecond: 0.001 } },
      },
      env: { TEST_INTROSPECTION_SECRET: 'gateway-test-secret', LOG_LEVEL: 'info' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), introspection?.stop(), service?.stop()]);
  });

  it('a correctly signed JWT without exp: 401 invalid_token in both eras and on /admin; with exp it is served', async () => {
    const { exp: _exp, ...noExp } = claims({ sub: 'no-exp' });
    const token = await as.sign(noExp);
    const reason = 'The access token has no expiry (exp is required)';
    expectInvalidToken(await legacy('tools/list', {}, token), reason);
    expectInvalidToken(await modern('tools/list', {}, token), reason);
    const admin = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
      headers: bearer(token),
    });
    expect(admin.status).toBe(401);
    const withExp = await as.sign(claims({ sub: 'with-exp' }));
    expect((await legacy('tools/list', {}, withExp)).status).toBe(200);
    const adminOk = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
      headers: bearer(withExp),
    });
    expect(adminOk.status).toBe(200);
  });

  it('iat a year ahead: 401 invalid_token (also from the provider itself); iat within clockSkewSeconds is served', async () => {
    const ahead = await as.sign(
      claims({ sub: 'future', iat: now() + YEAR, exp: now() + YEAR + 600 }),
    );
    const reason = 'The access token was issued in the future (iat)';
    expectInvalidToken(await legacy('tools/list', {}, ahead), reason);
    expectInvalidToken(await modern('tools/call', echo, ahead), reason);
    // the provider's own token machinery, iat set a year ahead
    const minted = await as.mint({ subject: 'future-minted', iat: now() + YEAR });
    expectInvalidToken(await legacy('tools/list', {}, minted.access_token), reason);
    // within the default skew (30 s): a clock slightly ahead of ours is not an attack
    const slightly = await as.sign(claims({ sub: 'skewed', iat: now() + 10 }));
    expect((await modern('tools/list', {}, slightly)).status).toBe(200);
  });

  it('typ at+jwt (RFC 9068, the provider) and JWT (Entra ID, Keycloak) are served; another typ or none is 401', async () => {
    const minted = (await as.mint({ subject: 'typ-minted' })).access_token;
    const header = JSON.parse(Buffer.from(minted.split('.')[0]!, 'base64url').toString()) as {
      typ?: string;
    };
    expect(header.typ).toBe('at+jwt');
    expect((await legacy('tools/list', {}, minted)).status).toBe(200);
    for (const typ of ['JWT', 'jwt', 'application/at+jwt']) {
      const token = await as.sign(claims({ sub: `typ-${typ}` }), { typ });
      expect((await modern('tools/list', {}, token)).status).toBe(200);
    }
    for (const typ of ['id_token+jwt', 'dpop+jwt', 'logout+jwt']) {
      const token = await as.sign(claims({ sub: 'typ-bad' }), { typ });
      expectInvalidToken(
        await legacy('tools/list', {}, token),
        'The access token has a "typ" that is not an accepted access token type',
      );
    }
    const untyped = await as.sign(claims({ sub: 'typ-none' }), { typ: null });
    expectInvalidToken(
      await modern('tools/list', {}, untyped),
      'The access token has no "typ" header (an access token type is required)',
    );
  });

  it('an ID token (nonce, at_hash, c_hash) is never taken for an access token, even with this audience and typ JWT', async () => {
    for (const idClaims of [
      { nonce: 'n-0S6_WzA2Mj' },
      { at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
      { c_hash: 'LDktKdoQak3Pk0cnXxCltA' },
    ]) {
      const token = await as.sign(claims({ sub: 'id-token-user', ...idClaims }), { typ: 'JWT' });
      expectInvalidToken(
        await legacy('tools/call', echo, token),
        'The token is an ID token, not an access token',
      );
      expectInvalidToken(
        await modern('tools/list', {}, token),
        'The token is an ID token, not an access token',
      );
    }
    expect(service.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('an active introspection answer without aud is refused (audience is configured); with aud it is served', async () => {
    const base = { active: true, scope: 'mcp', iss: as.issuer, exp: now() + 600 };
    introspection.answers.set('opaque-no-aud', { ...base, sub: 'intro-a' });
    introspection.answers.set('opaque-other-aud', {
      ...base,
      sub: 'intro-b',
      aud: 'https://other.test/mcp',
    });
    introspection.answers.set('opaque-aud', { ...base, sub: 'intro-c', aud: [RESOURCE, 'x'] });
    const reason = 'The access token was not issued for this resource';
    expectInvalidToken(await legacy('tools/list', {}, 'opaque-no-aud'), reason);
    expectInvalidToken(await modern('tools/list', {}, 'opaque-no-aud'), reason);
    expectInvalidToken(await legacy('tools/list', {}, 'opaque-other-aud'), reason);
    expect((await modern('tools/list', {}, 'opaque-aud')).status).toBe(200);
  });

  it('a token that names no caller (no sub, no client_id or azp, or only empty ones) is 401 on both paths and both eras; one that names a client is served', async () => {
    const reason =
      'The access token names no caller: it has neither a "sub" nor a "client_id" (or "azp") claim';
    const nameless = await as.sign(claims({ groups: ['dev'] }), { typ: 'JWT' });
    const empty = await as.sign(claims({ sub: '', client_id: '' }), { typ: 'JWT' });
    for (const token of [nameless, empty]) {
      expectInvalidToken(await legacy('tools/list', {}, token), reason);
      expectInvalidToken(await modern('tools/call', echo, token), reason);
    }
    const base = { active: true, scope: 'mcp', aud: RESOURCE, exp: now() + 600 };
    introspection.answers.set('opaque-nameless', base);
    introspection.answers.set('opaque-azp', { ...base, azp: 'a-client' });
    expectInvalidToken(
      await legacy(
        'initialize',
        {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'nameless', version: '1' },
        },
        'opaque-nameless',
      ),
      reason,
    );
    expectInvalidToken(await modern('tools/list', {}, 'opaque-nameless'), reason);
    expect((await modern('tools/list', {}, 'opaque-azp')).status).toBe(200);
    expect(service.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it("a token whose client_id is a victim's sub drains only its own bucket, and is audited as client:<id>, never as the victim", async () => {
    // JWT path: the victim's token from the provider, the other one signed by it with no sub
    const victim = (await as.mint({ subject: 'victim-1' })).access_token;
    const impostor = await as.sign(claims({ client_id: 'victim-1' }), { typ: 'JWT' });
    // introspection path: an opaque client token with the same client_id
    introspection.answers.set('opaque-impostor', {
      active: true,
      client_id: 'victim-1',
      scope: 'mcp',
      aud: RESOURCE,
      exp: now() + 600,
    });
    const before = auditLines().length;
    for (let i = 0; i < 3; i += 1)
      expect((await legacy('tools/call', echo, impostor)).status).toBe(200);
    expect((await legacy('tools/call', echo, impostor)).status).toBe(429);
    // the opaque impostor is the same caller (client:victim-1): its bucket is empty too
    expect((await modern('tools/call', echo, 'opaque-impostor')).status).toBe(429);
    // the victim's bucket is untouched: its three requests all pass
    for (let i = 0; i < 3; i += 1)
      expect((await modern('tools/call', echo, victim)).status).toBe(200);
    await waitFor(
      () => auditLines().length >= before + 8,
      10_000,
      () => gateway.output,
    );
    const lines = auditLines().slice(before);
    expect(lines.map((l) => [l.caller, l.subject, l.clientId, l.outcome])).toEqual([
      ['client:victim-1', null, 'victim-1', 'ok'],
      ['client:victim-1', null, 'victim-1', 'ok'],
      ['client:victim-1', null, 'victim-1', 'ok'],
      ['client:victim-1', null, 'victim-1', 'limited'],
      ['client:victim-1', null, 'victim-1', 'limited'],
      ['sub:victim-1', 'victim-1', 'gateway-test', 'ok'],
      ['sub:victim-1', 'victim-1', 'gateway-test', 'ok'],
      ['sub:victim-1', 'victim-1', 'gateway-test', 'ok'],
    ]);
  });
});
