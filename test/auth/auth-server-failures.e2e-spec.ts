import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { IntrospectionServer } from '../support/introspection-server';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc, type RawAnswer } from '../support/rpc';
import { TestToolService } from '../support/tool-service';
import { closedPort } from '../admin/admin-support';

jest.setTimeout(120_000);

/** The gateway's canonical resource URI (RFC 8707): the audience its tokens must carry. */
const RESOURCE = 'https://gateway.test/mcp';
const V = '2026-07-28';
/** mcp.auth.introspectionMaxConcurrent of these gateways. */
const MAX_CONCURRENT = 4;
/** mcp.auth.authorizationServerTimeoutMillis of these gateways. */
const AS_TIMEOUT_MS = 2_500;

const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
const now = (): number => Math.floor(Date.now() / 1000);
const junk = (): string => `junk-${randomBytes(12).toString('hex')}`;

const legacy = (gateway: GatewayProcess, method: string, token: string) =>
  rpc(
    gateway.mcpUrl,
    method,
    method === 'tools/call' ? { name: 'ops.echo', arguments: {} } : {},
    bearer(token),
  );

const modern = (gateway: GatewayProcess, method: string, token: string) =>
  postRaw(
    gateway.mcpUrl,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...(method === 'tools/call' ? { name: 'ops.echo', arguments: {} } : {}),
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
      ...(method === 'tools/call' ? { 'mcp-name': 'ops.echo' } : {}),
      ...bearer(token),
    },
  );

/** GET /admin/upstreams on the management port with a bearer token. */
async function adminList(gateway: GatewayProcess, token: string): Promise<RawAnswer> {
  const res = await fetch(`${gateway.managementUrl}/admin/upstreams`, { headers: bearer(token) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
}

/** The authorization server failed: 503 with Retry-After and a JSON body, never invalid_token. */
function expectUnavailable(answer: RawAnswer): void {
  expect(answer.status).toBe(503);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(answer.headers.get('content-type')).toContain('application/json');
  expect(answer.headers.get('www-authenticate')).toBeNull();
  expect(answer.json).toMatchObject({ error: 'temporarily_unavailable' });
  expect(answer.text).not.toContain('invalid_token');
}

/** The same, on every /mcp method of both eras (a 2025 and a 2026-07-28 request). */
async function expectUnavailableEverywhere(gateway: GatewayProcess, token: string): Promise<void> {
  for (const method of ['initialize', 'tools/list', 'tools/call', 'ping']) {
    const answer =
      method === 'initialize'
        ? await rpc(
            gateway.mcpUrl,
            'initialize',
            {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'e2e', version: '1' },
            },
            bearer(token),
          )
        : await legacy(gateway, method, token);
    expectUnavailable(answer);
  }
  for (const method of ['server/discover', 'tools/list', 'tools/call'])
    expectUnavailable(await modern(gateway, method, token));
}

/**
 * An authorization server that fails (docs/security.md "Refusals"): JWKS or introspection
 * unreachable, slower than `authorizationServerTimeoutMillis` or answering 5xx is answered
 * 503 with Retry-After on every /mcp method of both eras and on /admin JWT auth, never
 * invalid_token, so clients keep valid tokens; and introspection is bounded: identical tokens
 * share one call in flight, refused answers are reused briefly, and at most
 * `introspectionMaxConcurrent` calls are in flight. Both /mcp listeners.
 */
describe.each(['fastify', 'node'])(
  'an authorization server that fails or is slow (MCP_HTTP_SERVER=%s)',
  (listener) => {
    let as: TestAuthorizationServer;
    let idp: IntrospectionServer;
    let service: TestToolService;
    let gateway: GatewayProcess;

    beforeAll(async () => {
      [as, idp, service] = await Promise.all([
        TestAuthorizationServer.start({
          resources: { [RESOURCE]: { scope: 'mcp mcp:admin' } },
          defaultResource: RESOURCE,
        }),
        IntrospectionServer.start(),
        TestToolService.start(manifest('ops', [tool({ name: 'ops.echo' })])),
      ]);
      // the gateway boots while the provider's JWKS answers 503: it never learns a key
      await as.setJwksDown(true);
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
            introspectionUrl: idp.url,
            introspectionClientId: 'gateway-test',
            introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
            introspectionMaxConcurrent: MAX_CONCURRENT,
            authorizationServerTimeoutMillis: AS_TIMEOUT_MS,
            // a provider that sends no typ, allowed explicitly; JWT is then refused
            tokenTypes: ['at+jwt', 'none'],
          },
        },
        env: { TEST_INTROSPECTION_SECRET: 'gateway-test-secret', MCP_HTTP_SERVER: listener },
        waitReady: true,
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await Promise.all([as?.stop(), idp?.stop(), service?.stop()]);
    });

    it('JWKS answering 503: a valid JWT is 503 with Retry-After on every method and on /admin; served once JWKS is back', async () => {
      const token = (await as.mint({ subject: 'alice', scope: 'mcp mcp:admin' })).access_token;
      await expectUnavailableEverywhere(gateway, token);
      const admin = await adminList(gateway, token);
      expect(admin.status).toBe(503);
      expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(admin.json).toMatchObject({ statusCode: 503 });
      expect(admin.headers.get('www-authenticate')).toBeNull();
      // the client kept its token: once the key set can be fetched, the same token is served
      await as.setJwksDown(false);
      await waitFor(
        async () => (await legacy(gateway, 'tools/list', token)).status === 200,
        20_000,
      );
      expect((await modern(gateway, 'tools/call', token)).status).toBe(200);
      expect((await adminList(gateway, token)).status).toBe(200);
      // and a bad token is still 401 invalid_token (the keys are known now)
      const wrong = (await as.mint({ subject: 'alice', resource: 'https://other.test/mcp' }))
        .access_token;
      const refused = await legacy(gateway, 'tools/list', wrong);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });

    it('tokenTypes is configurable: with [at+jwt, none] a token without typ is served and typ JWT is refused', async () => {
      const claims = {
        iss: as.issuer,
        aud: RESOURCE,
        sub: 'typ-user',
        scope: 'mcp',
        iat: now(),
        exp: now() + 600,
      };
      const untyped = await as.sign(claims, { typ: null });
      await waitFor(
        async () => (await legacy(gateway, 'tools/list', untyped)).status === 200,
        20_000,
      );
      const typed = await as.sign(claims, { typ: 'JWT' });
      expect((await modern(gateway, 'tools/list', typed)).status).toBe(401);
    });

    it(`50 parallel random opaque tokens against a slow IdP: at most ${MAX_CONCURRENT} introspections in flight, one per token, each refused 401`, async () => {
      idp.reset();
      idp.behaviour.delayMs = 60;
      try {
        const tokens = Array.from({ length: 50 }, junk);
        const answers = await Promise.all(
          tokens.map((t, i) =>
            i % 2 === 0 ? legacy(gateway, 'tools/list', t) : modern(gateway, 'tools/list', t),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(tokens.map(() => 401));
        expect(idp.maxInFlight).toBeLessThanOrEqual(MAX_CONCURRENT);
        expect(idp.maxInFlight).toBeGreaterThan(1);
        expect([...idp.asked].sort()).toEqual([...tokens].sort());
      } finally {
        idp.behaviour.delayMs = 0;
      }
    });

    it('the same junk token 20 times in parallel makes one introspection, 20 more in a row none (inactive answer reused)', async () => {
      idp.reset();
      idp.behaviour.delayMs = 200;
      try {
        const token = junk();
        const parallel = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            i % 2 === 0
              ? legacy(gateway, 'tools/list', token)
              : modern(gateway, 'tools/call', token),
          ),
        );
        expect(parallel.map((a) => a.status)).toEqual(parallel.map(() => 401));
        expect(idp.asked).toEqual([token]);
        for (let i = 0; i < 20; i += 1)
          expect((await legacy(gateway, 'tools/call', token)).status).toBe(401);
        expect(idp.asked).toEqual([token]);
      } finally {
        idp.behaviour.delayMs = 0;
      }
    });

    it('introspection answering 500: 503 on every method and on /admin (never cached); served at once when it recovers', async () => {
      idp.answers.set('opaque-alice', {
        active: true,
        sub: 'alice',
        scope: 'mcp mcp:admin',
        aud: RESOURCE,
        iss: as.issuer,
        exp: now() + 600,
      });
      idp.behaviour.status = 500;
      try {
        await expectUnavailableEverywhere(gateway, 'opaque-alice');
        const admin = await adminList(gateway, 'opaque-alice');
        expect(admin.status).toBe(503);
        expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      } finally {
        idp.behaviour.status = 200;
      }
      expect((await legacy(gateway, 'tools/call', 'opaque-alice')).status).toBe(200);
      expect((await modern(gateway, 'tools/list', 'opaque-alice')).status).toBe(200);
      expect((await adminList(gateway, 'opaque-alice')).status).toBe(200);
    });

    it('introspection slower than authorizationServerTimeoutMillis: 503, not invalid_token', async () => {
      idp.answers.set('opaque-slow', {
        active: true,
        sub: 'slow',
        scope: 'mcp',
        aud: RESOURCE,
        exp: now() + 600,
      });
      idp.behaviour.delayMs = AS_TIMEOUT_MS + 2_000;
      try {
        const [a, b] = await Promise.all([
          legacy(gateway, 'tools/list', 'opaque-slow'),
          modern(gateway, 'tools/call', 'opaque-slow'),
        ]);
        expectUnavailable(a);
        expectUnavailable(b);
      } finally {
        idp.behaviour.delayMs = 0;
      }
      expect((await legacy(gateway, 'tools/list', 'opaque-slow')).status).toBe(200);
    });
  },
);

/** A TCP server on 127.0.0.1 that accepts connections and never answers (a hung JWKS). */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Against the real provider's introspection (oidc-provider), with an unreachable JWKS: the
 * "same junk token 20 times" counted at the provider, and the unreachable and hung
 * cases (a second gateway: introspection unreachable, JWKS accepting but never answering).
 */
describe('introspection at oidc-provider; JWKS and introspection unreachable', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  let gateway: GatewayProcess;
  let unreachable: GatewayProcess;
  let hung: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    hung = await silentServer();
    [as, service] = await Promise.all([
      TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp mcp:admin', format: 'opaque' } },
        defaultResource: RESOURCE,
      }),
      TestToolService.start(manifest('ops', [tool({ name: 'ops.echo' })])),
    ]);
    const auth = {
      mode: 'jwt',
      issuer: as.issuer,
      audience: RESOURCE,
      requiredScopes: ['mcp'],
      algorithms: ['ES256'],
      introspectionClientId: 'gateway-test',
      introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
      authorizationServerTimeoutMillis: AS_TIMEOUT_MS,
    };
    const [nowhere, nowhereToo] = await Promise.all([closedPort(), closedPort()]);
    [gateway, unreachable] = await Promise.all([
      GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ops', service, 'ops.')]),
          http: { modernEra: true },
          auth: {
            ...auth,
            jwksUrl: `http://127.0.0.1:${nowhere}/jwks`,
            introspectionUrl: as.introspectionUrl,
          },
        },
        env: { TEST_INTROSPECTION_SECRET: 'gateway-test-secret' },
        waitReady: true,
      }),
      GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ops', service, 'ops.')]),
          http: { modernEra: true },
          auth: {
            ...auth,
            jwksUrl: hung.url,
            introspectionUrl: `http://127.0.0.1:${nowhereToo}/introspect`,
          },
        },
        env: { TEST_INTROSPECTION_SECRET: 'gateway-test-secret' },
        waitReady: true,
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), unreachable?.stop()]);
    await Promise.all([as?.stop(), service?.stop(), hung?.close()]);
  });

  it('the same junk token 20 times (parallel, then in a row) costs the provider one introspection', async () => {
    const before = (await as.counters()).introspection;
    const token = junk();
    const parallel = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? legacy(gateway, 'tools/list', token) : modern(gateway, 'tools/list', token),
      ),
    );
    expect(parallel.map((a) => a.status)).toEqual(parallel.map(() => 401));
    for (let i = 0; i < 20; i += 1) expect((await legacy(gateway, 'ping', token)).status).toBe(401);
    expect((await as.counters()).introspection - before).toBe(1);
    // a real opaque token is still introspected on every request (no active answer reuse by default)
    const minted = await as.mint({ subject: 'erin', scope: 'mcp' });
    expect((await legacy(gateway, 'tools/list', minted.access_token)).status).toBe(200);
    await as.revokeGrant(minted.grantId);
    expect((await modern(gateway, 'tools/list', minted.access_token)).status).toBe(401);
  });

  it('JWKS unreachable: a JWT is 503 with Retry-After on every method and on /admin', async () => {
    const token = await as.sign({
      iss: as.issuer,
      aud: RESOURCE,
      sub: 'alice',
      scope: 'mcp mcp:admin',
      iat: now(),
      exp: now() + 600,
    });
    await expectUnavailableEverywhere(gateway, token);
    const admin = await adminList(gateway, token);
    expect(admin.status).toBe(503);
    expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('introspection unreachable: an opaque token is 503 with Retry-After on every method and on /admin', async () => {
    const minted = await as.mint({ subject: 'frank', scope: 'mcp mcp:admin' });
    await expectUnavailableEverywhere(unreachable, minted.access_token);
    const admin = await adminList(unreachable, minted.access_token);
    expect(admin.status).toBe(503);
    expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // one warn line (log lines are written a little after the answers)
    await unreachable.waitForOutput("the authorization server's introspection failed");
    expect(unreachable.output).not.toContain(minted.access_token);
  });

  it('JWKS accepting connections but never answering: a JWT is 503 after authorizationServerTimeoutMillis', async () => {
    const token = await as.sign({
      iss: as.issuer,
      aud: RESOURCE,
      sub: 'alice',
      scope: 'mcp',
      iat: now(),
      exp: now() + 600,
    });
    const [a, b] = await Promise.all([
      legacy(unreachable, 'tools/list', token),
      modern(unreachable, 'tools/call', token),
    ]);
    expectUnavailable(a);
    expectUnavailable(b);
  });
});
