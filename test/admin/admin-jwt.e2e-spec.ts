import { gatewayConfig, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { stopAfterEach } from '../support/cleanup';
import { DEFAULT_TEST_CLIENT, TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';
import { ADMIN_TOKEN, admin, auditLines, startGateway } from './admin-support';

/** The gateway's canonical resource URI (RFC 8707): the audience of every token it accepts. */
const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/operations.md §15 "Access", with docs/operations.md §13: when `mcp.auth.mode` is `jwt`, the
 * admin role is a token the /mcp resource server verifies and that carries `mcp.admin.scope`; the
 * static MCP_ADMIN_TOKEN is then not accepted. A real authorization server (oidc-provider) issues
 * the tokens.
 */
describe('/admin with mcp.auth jwt: the admin scope decides', () => {
  let as: TestAuthorizationServer;
  let calc: V2Upstream;
  let other: V2Upstream;
  const track = stopAfterEach();

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp mcp:admin' } },
      defaultResource: RESOURCE,
    });
    [calc, other] = await Promise.all([V2Upstream.start(), V2Upstream.start()]);
  });

  afterAll(async () => {
    await Promise.all([as?.stop(), calc?.stop(), other?.stop()]);
  });

  const start = () =>
    startGateway(
      {
        mcp: {
          ...gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
          auth: {
            mode: 'jwt',
            issuer: as.issuer,
            audience: RESOURCE,
            jwksUrl: as.jwksUrl,
            requiredScopes: ['mcp'],
            algorithms: ['ES256'],
          },
        },
        // set, but a verifier is configured: the static token must not open /admin
        env: {
          MCP_ADMIN_TOKEN: ADMIN_TOKEN,
          MCP_UPSTREAM_SECRET_EXCHANGE: DEFAULT_TEST_CLIENT.client_secret,
        },
        waitReady: true,
      },
      track,
    );

  it('a token with the admin scope registers; one without it, the static token and no token are refused', async () => {
    const gateway = await start();
    const operator = (await as.mint({ subject: 'ops-alice', scope: 'mcp mcp:admin' })).access_token;
    const user = (await as.mint({ subject: 'bob', scope: 'mcp' })).access_token;

    const posted = await admin(
      gateway,
      'POST',
      '/admin/upstreams',
      { id: 'other', url: other.url },
      operator,
    );
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({
      id: 'other',
      state: 'PENDING',
      createdBy: 'sub:ops-alice',
    });

    const noScope = await admin(
      gateway,
      'POST',
      '/admin/upstreams',
      { id: 'third', url: other.url, namePrefix: 'third__' },
      user,
    );
    expect(noScope.status).toBe(403);
    expect((await admin(gateway, 'GET', '/admin/upstreams', undefined, user)).status).toBe(403);

    const staticToken = await admin(gateway, 'GET', '/admin/upstreams', undefined, ADMIN_TOKEN);
    expect(staticToken.status).toBe(401);
    expect((await admin(gateway, 'GET', '/admin/upstreams', undefined, null)).status).toBe(401);

    // the operator's token reads; the record goes ACTIVE
    let active: { state?: string } | undefined;
    for (let i = 0; i < 200 && active?.state !== 'ACTIVE'; i++) {
      active = (await admin(gateway, 'GET', '/admin/upstreams/other', undefined, operator)).body;
      if (active?.state !== 'ACTIVE') await new Promise((r) => setTimeout(r, 100));
    }
    expect(active).toMatchObject({ state: 'ACTIVE' });

    // the audit names who did it, never the token
    await gateway.waitForOutput('"actor":"sub:ops-alice"');
    const lines = auditLines(gateway);
    expect(lines.some((l) => l.actor === 'sub:ops-alice' && l.actorVia === 'jwt')).toBe(true);
    expect(gateway.output).not.toContain(operator);
    expect(gateway.output).not.toContain(user);
  });

  it("a registration cannot have callers' gateway tokens sent to the registrant: passthrough and a token endpoint of its choosing are 400, the issuer's is accepted", async () => {
    const gateway = await start();
    const operator = (await as.mint({ subject: 'ops-alice', scope: 'mcp mcp:admin' })).access_token;
    const user = (await as.mint({ subject: 'bob', scope: 'mcp' })).access_token;
    // the registrant's server: the MCP server it registers, and the token endpoint it names
    const harvester = await V2Upstream.start();
    try {
      const exchange = (id: string, tokenEndpoint: string) =>
        admin(
          gateway,
          'POST',
          '/admin/upstreams',
          {
            id,
            url: harvester.url,
            authorization: {
              mode: 'tokenExchange',
              tokenEndpoint,
              clientId: DEFAULT_TEST_CLIENT.client_id,
              clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
              audience: 'https://harvester.example/mcp',
            },
          },
          operator,
        );
      const passthrough = await admin(
        gateway,
        'POST',
        '/admin/upstreams',
        { id: 'grab', url: harvester.url, authorization: { mode: 'passthrough' } },
        operator,
      );
      expect(passthrough.status).toBe(400);
      expect(passthrough.body.problems).toEqual([
        expect.stringMatching(
          /^authorization\.mode: passthrough is not accepted for a registered upstream/,
        ),
      ]);
      const foreign = await exchange('grab2', `${harvester.url.replace(/\/mcp$/, '')}/token`);
      expect(foreign.status).toBe(400);
      expect(foreign.body.problems).toEqual([
        expect.stringMatching(
          /^authorization\.tokenEndpoint: is not a token endpoint the configuration trusts/,
        ),
      ]);
      // the issuer's own token endpoint (same origin as mcp.auth.issuer) is trusted
      const trusted = await exchange('exch', as.tokenUrl);
      expect(trusted.status).toBe(202);

      // callers use the gateway: their tokens never reach the registrant
      const call = await rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'calc__add', arguments: { a: 1, b: 2 } },
        { authorization: `Bearer ${user}` },
      );
      expect(call.json?.result?.structuredContent).toEqual({ sum: 3 });
      await rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${user}` });
      const carried = harvester.requests.map((r) => String(r.headers.authorization ?? ''));
      expect(carried.filter((h) => h.includes(user) || h.includes(operator))).toEqual([]);
      expect(
        (await admin(gateway, 'GET', '/admin/upstreams', undefined, operator)).body.upstreams.map(
          (u: { id: string }) => u.id,
        ),
      ).toEqual(['calc', 'exch']);
    } finally {
      await harvester.stop();
    }
  });

  it("a registration at the issuer's token endpoint cannot ask for the gateway's audience or the admin scope: 400 naming authorization.audience / authorization.scope", async () => {
    const gateway = await start();
    const operator = (await as.mint({ subject: 'ops-alice', scope: 'mcp mcp:admin' })).access_token;
    const harvester = await V2Upstream.start();
    try {
      const authorization = (audience: string, scope?: string) => ({
        mode: 'tokenExchange',
        tokenEndpoint: as.tokenUrl,
        clientId: DEFAULT_TEST_CLIENT.client_id,
        clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
        audience,
        ...(scope === undefined ? {} : { scope }),
      });
      const register = (id: string, audience: string, scope?: string) =>
        admin(
          gateway,
          'POST',
          '/admin/upstreams',
          { id, url: harvester.url, authorization: authorization(audience, scope) },
          operator,
        );
      for (const audience of [RESOURCE, `${RESOURCE}/`, as.issuer]) {
        const own = await register('grab', audience);
        expect(own.status).toBe(400);
        expect(own.body.problems).toEqual([
          expect.stringMatching(/^authorization\.audience: is this gateway's own audience/),
        ]);
      }
      const adminScope = await register('grab', 'https://harvester.example/mcp', 'mcp mcp:admin');
      expect(adminScope.status).toBe(400);
      expect(adminScope.body.problems).toEqual([
        expect.stringMatching(/^authorization\.scope: includes the admin scope/),
      ]);

      expect((await register('exch', 'https://harvester.example/mcp', 'mcp')).status).toBe(202);
      // a PATCH never changes authorization (delete and register again), so POST is the door
      expect(
        (await admin(gateway, 'GET', '/admin/upstreams', undefined, operator)).body.upstreams.map(
          (u: { id: string }) => u.id,
        ),
      ).toEqual(['calc', 'exch']);
    } finally {
      await harvester.stop();
    }
  });
});
