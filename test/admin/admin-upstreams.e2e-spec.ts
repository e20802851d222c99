import { request as httpRequest } from 'node:http';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { connectV1 } from '../support/sdk-clients';
import { V1AskingUpstream } from '../mrtr/mrtr-upstreams';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { stopAfterEach } from '../support/cleanup';
import {
  ADMIN_TOKEN,
  admin,
  auditLines,
  awaitAuditLine,
  closedPort,
  toolNames,
  waitForState,
  waitForTool,
  startGateway,
} from './admin-support';

/**
 * docs/operations.md §15 "Routes", "Access": the registration API on the management port, memory
 * storage. The gateway fronts one configured upstream (`calc`, a v2 SDK server); the tests register
 * real SDK servers beside it and watch them become ACTIVE, FAILED or go away.
 */
describe('/admin/upstreams (memory storage, static admin token)', () => {
  let calc: V2Upstream;
  let other: V2Upstream;
  let legacy: V1Upstream;
  const track = stopAfterEach();

  beforeAll(async () => {
    [calc, other, legacy] = await Promise.all([
      V2Upstream.start(),
      V2Upstream.start(),
      V1Upstream.start(),
    ]);
  });

  afterAll(async () => {
    await Promise.all([calc?.stop(), other?.stop(), legacy?.stop()]);
  });

  const start = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
    startGateway(
      {
        mcp: {
          ...gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
          ...extra,
        },
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
        waitReady: true,
      },
      track,
    );

  it("the gateway's own /mcp URL registered is refused by the gateway itself (508 Loop Detected): FAILED, and its catalog never republished one level deeper each round", async () => {
    const gateway = await start();
    // what the gateway sends an upstream carries its Via entry; a request with it is refused
    const { rpc } = await import('../support/rpc');
    const looped = await rpc(gateway.mcpUrl, 'tools/list', undefined, {
      via: '1.1 proxy.example, 1.1 mcp-gateway.mcp-gateway-test',
    });
    expect(looped.status).toBe(508);
    expect(looped.json.error.message).toMatch(/^Loop Detected/);
    // another proxy's Via, or another gateway's, is no loop
    for (const via of ['1.1 proxy.example', '1.1 mcp-gateway.another-identity'])
      expect((await rpc(gateway.mcpUrl, 'tools/list', undefined, { via })).status).toBe(200);
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'self',
      url: gateway.mcpUrl,
      namePrefix: 's__',
    });
    expect(posted.status).toBe(202);
    const failed = await waitForState(gateway, 'self', 'FAILED');
    expect(JSON.stringify(failed)).toMatch(/508/);
    // an unknown tool refreshes the sources (contract §8): still nothing under the prefix
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'nope', arguments: {} });
    expect((await toolNames(gateway)).filter((n) => n.startsWith('s__'))).toEqual([]);
    expect(await toolNames(gateway)).toContain('calc__add');
  });

  it('registers a 2026 and a 2025 SDK server: 202 PENDING, then ACTIVE with era and tool count, tools served on /mcp', async () => {
    const gateway = await start();
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
    });
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({
      id: 'other',
      url: other.url,
      namePrefix: 'other__',
      enabled: true,
      protocol: 'auto',
      authorization: { mode: 'none' },
      origin: 'registered',
      state: 'PENDING',
      createdBy: 'admin-token',
    });
    expect(Date.parse(posted.body.createdAt)).not.toBeNaN();
    expect(posted.body.updatedAt).toBe(posted.body.createdAt);

    const active = await waitForState(gateway, 'other', 'ACTIVE');
    expect(active).toMatchObject({ era: '2026-07-28', toolCount: 2 });
    expect(active.reason).toBeUndefined();
    await waitForTool(gateway, 'other__add');

    const v1 = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'repo',
      url: legacy.url,
      namePrefix: 'r_',
    });
    expect(v1.status).toBe(202);
    const repo = await waitForState(gateway, 'repo', 'ACTIVE');
    expect(repo.era).toBe('2025-11-25');
    expect(repo.toolCount).toBeGreaterThan(0);
    await waitForTool(gateway, 'r_flaky');
    // a registered upstream's tool is called through /mcp like a configured one's
    const { rpc } = await import('../support/rpc');
    const call = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'other__add',
      arguments: { a: 2, b: 3 },
    });
    expect(call.json.result.structuredContent).toEqual({ sum: 5 });

    const list = await admin(gateway, 'GET', '/admin/upstreams');
    expect(list.status).toBe(200);
    expect(list.body.storage).toBe('memory');
    expect(list.body.upstreams.map((u: { id: string }) => u.id)).toEqual(['calc', 'other', 'repo']);
    expect(list.body.upstreams[0]).toMatchObject({
      id: 'calc',
      origin: 'config',
      state: 'ACTIVE',
      createdBy: 'config',
      era: '2026-07-28',
    });

    // every change is one audit line naming who made it
    // the second registration's line (lines reach stdout in batches)
    await gateway.waitForOutput(/"action":"upstream\.register"[^\n]*"upstreamId":"repo"/);
    const audit = auditLines(gateway).filter((l) => l.action === 'upstream.register');
    expect(audit).toEqual([
      expect.objectContaining({
        upstreamId: 'other',
        actor: 'admin-token',
        status: 202,
        outcome: 'accepted',
      }),
      expect.objectContaining({
        upstreamId: 'repo',
        actor: 'admin-token',
        status: 202,
        outcome: 'accepted',
      }),
    ]);
  });

  it('a registered 2025 upstream asking the client mid-call: the relayed question is answered and the answer reaches it', async () => {
    const asking = track(await V1AskingUpstream.start());
    const gateway = await start();
    const posted = await admin(gateway, 'POST', '/admin/upstreams', { id: 'ask', url: asking.url });
    expect(posted.status).toBe(202);
    await waitForState(gateway, 'ask', 'ACTIVE');
    await waitForTool(gateway, 'ask__approve');
    const client = await connectV1(gateway.mcpUrl, {}, { elicitation: { form: {} } });
    try {
      client.setRequestHandler(ElicitRequestSchema, () => ({
        action: 'accept',
        content: { approve: true },
      }));
      const result = await client.callTool({
        name: 'ask__approve',
        arguments: { question: 'Ship it?' },
      });
      expect(result.isError).toBeFalsy();
      expect((result.content as { text: string }[])[0]?.text).toBe(
        'approve={"action":"accept","content":{"approve":true}}',
      );
    } finally {
      await client.close();
    }
  });

  it('an upstream that cannot be reached becomes FAILED with the reason, and the catalog stays as it was', async () => {
    const gateway = await start();
    const before = await toolNames(gateway);
    const port = await closedPort();
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'gone',
      url: `http://127.0.0.1:${port}/mcp`,
      timeouts: { connectMillis: 300, listMillis: 1000 },
    });
    expect(posted.status).toBe(202);
    expect(posted.body.state).toBe('PENDING');
    const failed = await waitForState(gateway, 'gone', 'FAILED');
    expect(failed.reason).toMatch(/^UpstreamUnreachableError/);
    expect(await toolNames(gateway)).toEqual(before);
  });

  it('a registration the merge rejects (catalog too large) is FAILED with the reason; the catalog keeps its tools', async () => {
    // calc publishes 2 tools; a limit of 3 leaves no room for other's 2
    const gateway = await start({
      discovery: { ...(gatewayConfig([]).discovery as object), maxToolsTotal: 3 },
    });
    const before = await toolNames(gateway);
    expect(before).toEqual(['calc__add', 'calc__shout']);
    expect(
      (await admin(gateway, 'POST', '/admin/upstreams', { id: 'other', url: other.url })).status,
    ).toBe(202);
    const failed = await waitForState(gateway, 'other', 'FAILED');
    expect(failed.reason).toMatch(/^CatalogTooLargeError: /);
    expect(await toolNames(gateway)).toEqual(before);
  });

  it('a registration that never fits stays FAILED and does not take a later, fitting one down with it', async () => {
    // calc publishes 2 tools, legacy 6, other 2; a limit of 4 has room for calc and other only
    const gateway = await start({
      discovery: { ...(gatewayConfig([]).discovery as object), maxToolsTotal: 4 },
    });
    expect(
      (await admin(gateway, 'POST', '/admin/upstreams', { id: 'repo', url: legacy.url })).status,
    ).toBe(202);
    // 6 tools can never fit maxToolsTotal 4: refused as they are counted, before the merge
    expect((await waitForState(gateway, 'repo', 'FAILED')).reason).toBe(
      'UpstreamTooManyToolsError: tools/list lists more than 4 tools (mcp.discovery.maxToolsTotal 4)',
    );
    expect(
      (await admin(gateway, 'POST', '/admin/upstreams', { id: 'other', url: other.url })).status,
    ).toBe(202);
    const active = await waitForState(gateway, 'other', 'ACTIVE');
    expect(active.reason).toBeUndefined();
    await waitForTool(gateway, 'other__add');
    expect(await toolNames(gateway)).toEqual([
      'calc__add',
      'calc__shout',
      'other__add',
      'other__shout',
    ]);
    const repo = (await admin(gateway, 'GET', '/admin/upstreams/repo')).body;
    expect(repo).toMatchObject({ state: 'FAILED' });
    expect(repo.reason).toMatch(/^UpstreamTooManyToolsError: /);
  });

  it("a registration never forwards the headers that carry a caller's credentials (auth proxies' token headers): 400 naming each, and the registered server never sees them", async () => {
    const gateway = await start();
    const proxyHeaders = [
      'X-Forwarded-Authorization',
      'X-Amzn-Oidc-Accesstoken',
      'X-Forwarded-Access-Token',
    ];
    const refused = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
      forwardHeaders: proxyHeaders,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.problems).toEqual(
      proxyHeaders.map((name) =>
        expect.stringMatching(new RegExp(`^forwardHeaders: "${name}" may carry a caller's`)),
      ),
    );

    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
      forwardHeaders: ['X-Tenant'],
    });
    expect(posted.status).toBe(202);
    await waitForState(gateway, 'other', 'ACTIVE');
    await waitForTool(gateway, 'other__add');
    const { rpc } = await import('../support/rpc');
    const calls = other.requestsFor('tools/call').length;
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'other__add', arguments: { a: 2, b: 3 } },
      {
        'x-tenant': 't1',
        'x-forwarded-authorization': 'Bearer proxy-token',
        'x-amzn-oidc-accesstoken': 'alb-token',
        'x-forwarded-access-token': 'oauth2-proxy-token',
      },
    );
    expect(call.json.result.structuredContent).toEqual({ sum: 5 });
    const seen = other.requestsFor('tools/call').slice(calls);
    expect(seen.map((r) => r.headers['x-tenant'])).toEqual(['t1']);
    for (const r of seen)
      for (const name of proxyHeaders) expect(r.headers[name.toLowerCase()]).toBeUndefined();
  });

  it('validation is the boot validation: 400 naming each field; a secret value is never accepted', async () => {
    const gateway = await start();
    const bad = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'bad id!',
      url: 'ftp://127.0.0.1/mcp',
      protocol: '2024-01-01',
      forwardHeaders: ['Cookie'],
    });
    expect(bad.status).toBe(400);
    // every broken field at once, as the boot names them: the URL and header rules too
    expect(bad.body.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^id: /),
        expect.stringMatching(/^protocol: /),
        expect.stringMatching(/^url: must be an http\(s\) URL/),
        expect.stringMatching(/^forwardHeaders: "Cookie" may not be forwarded/),
      ]),
    );
    const url = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'x',
      url: 'ftp://127.0.0.1/mcp',
    });
    expect(url.status).toBe(400);
    expect(url.body.problems).toEqual([expect.stringMatching(/^url: must be an http\(s\) URL/)]);
    const header = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'x',
      url: other.url,
      forwardHeaders: ['Cookie'],
    });
    expect(header.status).toBe(400);
    expect(header.body.problems).toEqual([
      expect.stringMatching(/^forwardHeaders: "Cookie" may not be forwarded/),
    ]);

    const secret = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'x',
      url: other.url,
      authorization: { mode: 'static', value: 'Bearer s3cr3t' },
    });
    expect(secret.status).toBe(400);
    expect(secret.body.problems).toEqual([
      expect.stringMatching(/^authorization\.value: secret values are never accepted/),
    ]);
    expect(gateway.output).not.toContain('s3cr3t');
    const unset = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'x',
      url: other.url,
      authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_NOT_SET_13' },
    });
    expect(unset.status).toBe(400);
    expect(unset.body.problems).toEqual([
      'authorization.valueEnv: environment variable MCP_UPSTREAM_SECRET_NOT_SET_13 is not set or empty',
    ]);
    const notJson = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '[1,2]',
    });
    expect(notJson.status).toBe(400);
    // a body nested past any registration's shape is refused before it is read
    const nested = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: `{"id":"x","url":${JSON.stringify(other.url)},"timeouts":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { problems?: string[] } }));
    expect(nested.status).toBe(400);
    expect(nested.body.problems).toEqual([expect.stringMatching(/nested deeper than 16 levels/)]);
    // a URL is bounded (every record is kept, stored in Redis, listed and audited); the answer
    // and the audit line do not carry it back whole
    const before = auditLines(gateway).length;
    const longUrl = `${other.url}/${'p'.repeat(500_000)}`;
    const long = await admin(gateway, 'POST', '/admin/upstreams', { id: 'hugeurl', url: longUrl });
    expect(long.status).toBe(400);
    expect(long.body.problems).toEqual([
      expect.stringMatching(/^url: must be at most 2048 characters \(got "http:/),
    ]);
    expect(JSON.stringify(long.body).length).toBeLessThan(4096);
    const longLine = await awaitAuditLine(gateway, before, (l) => l.upstreamId === 'hugeurl');
    expect(JSON.stringify(longLine).length).toBeLessThan(2048);
    expect(gateway.output).not.toContain('p'.repeat(600));
    // nothing was registered by any of these
    const list = await admin(gateway, 'GET', '/admin/upstreams');
    expect(list.body.upstreams.map((u: { id: string }) => u.id)).toEqual(['calc']);
  });

  it('takes JSON bodies only (415), stores the URL normalised, and refuses registrations beyond mcp.admin.maxRegistrations (409)', async () => {
    const gateway = await start({
      admin: { maxRegistrations: 1 },
    });
    const post = (contentType: string, body: string) =>
      fetch(`${gateway.managementUrl}/admin/upstreams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType },
        body,
      });
    const form = await post(
      'application/x-www-form-urlencoded',
      `id=other&url=${encodeURIComponent(other.url)}`,
    );
    expect(form.status).toBe(415);
    expect(await form.json()).toMatchObject({
      statusCode: 415,
      error: 'Unsupported Media Type',
      message: expect.stringMatching(/application\/json/),
    });
    expect((await post('text/plain', JSON.stringify({ id: 'other', url: other.url }))).status).toBe(
      415,
    );
    // what fastify refuses before the route runs has the same shape
    const raw = async (init: RequestInit): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${gateway.managementUrl}/admin/upstreams`, {
        method: 'POST',
        ...init,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.headers as object) },
      });
      return { status: res.status, body: await res.json() };
    };
    expect(await raw({ headers: { 'content-type': 'application/json' }, body: '{bad' })).toEqual({
      status: 400,
      body: { statusCode: 400, error: 'Bad Request', message: expect.any(String) },
    });
    expect(await raw({ headers: { 'content-type': 'application/xml' }, body: '<a/>' })).toEqual({
      status: 415,
      body: { statusCode: 415, error: 'Unsupported Media Type', message: expect.any(String) },
    });
    // A body over the limit, declared by Content-Length and not sent: the 413 comes from the
    // declared size before any byte is read (sending 2 MB raced the server's close: EPIPE).
    const oversized = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = httpRequest(
        `${gateway.managementUrl}/admin/upstreams`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            'content-type': 'application/json',
            'content-length': String(2 * 1024 * 1024),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
            req.destroy();
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(oversized).toEqual({
      status: 413,
      body: { statusCode: 413, error: 'Payload Too Large', message: expect.any(String) },
    });
    // refused before the route runs, and audit-logged all the same
    await gateway.waitForOutput(/"action":"upstream\.register"[^\n]*"status":413/);
    expect(auditLines(gateway).filter((l) => [400, 413].includes(l.status))).toEqual([
      expect.objectContaining({
        action: 'upstream.register',
        actor: null,
        status: 400,
        outcome: 'refused',
      }),
      expect.objectContaining({
        action: 'upstream.register',
        actor: null,
        status: 413,
        outcome: 'refused',
      }),
    ]);
    const patch = await fetch(`${gateway.managementUrl}/admin/upstreams/other`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' },
      body: '{"enabled":false}',
    });
    expect(patch.status).toBe(415);
    expect((await admin(gateway, 'GET', '/admin/upstreams')).body.upstreams).toHaveLength(1);
    await gateway.waitForOutput('"status":415');
    expect(auditLines(gateway)).toContainEqual(
      expect.objectContaining({ action: 'upstream.register', status: 415, outcome: 'refused' }),
    );

    // scheme and host are stored lower case, the default port dropped
    const shouted = other.url.replace('http://127.0.0.1', 'HTTP://127.0.0.1');
    const posted = await admin(gateway, 'POST', '/admin/upstreams', { id: 'other', url: shouted });
    expect(posted.status).toBe(202);
    expect(posted.body.url).toBe(other.url);
    await waitForState(gateway, 'other', 'ACTIVE');

    const full = await admin(gateway, 'POST', '/admin/upstreams', { id: 'repo', url: legacy.url });
    expect(full.status).toBe(409);
    expect(full.body.problems).toEqual([expect.stringMatching(/mcp\.admin\.maxRegistrations 1/)]);
    expect((await admin(gateway, 'DELETE', '/admin/upstreams/other')).status).toBe(200);
    expect(
      (await admin(gateway, 'POST', '/admin/upstreams', { id: 'repo', url: legacy.url })).status,
    ).toBe(202);
  });

  it('a tokenExchange registration reads its client secret from clientSecretEnv and shows every reference, never the secret', async () => {
    const authorization = {
      mode: 'tokenExchange',
      tokenEndpoint: 'http://10.0.0.7/token',
      clientId: 'gw',
      clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE_13',
      audience: 'https://x.example/mcp',
    };
    // the token endpoint is one a configured source uses (here a disabled upstream's)
    const gateway = await start(
      {
        upstreams: [
          upstream('calc', calc.url),
          upstream('idp-user', 'http://10.0.0.8/mcp', {
            enabled: false,
            authorization: { ...authorization, audience: 'https://idp-user.example/mcp' },
          }),
        ],
      },
      { MCP_UPSTREAM_SECRET_EXCHANGE_13: 'exchange-secret-77' },
    );
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
      authorization,
    });
    expect(posted.status).toBe(202);
    expect(posted.body.authorization).toEqual(authorization);
    expect(JSON.stringify(posted.body)).not.toContain('exchange-secret-77');
    expect(gateway.output).not.toContain('exchange-secret-77');
    // tokenExchange: every caller's token goes to the token endpoint, so a registration names
    // one the configuration trusts (and it passes the address rules of the URL as well)
    const exchange = (tokenEndpoint: string, audience = 'https://x2.example/mcp') =>
      admin(gateway, 'POST', '/admin/upstreams', {
        id: 'x2',
        url: other.url,
        authorization: {
          mode: 'tokenExchange',
          tokenEndpoint,
          clientId: 'gw',
          clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE_13',
          audience,
        },
      });
    // the audience of the upstream registered before it: its callers' tokens would come here
    const sameAudience = await exchange('http://10.0.0.7/token', 'https://x.example/mcp');
    expect(sameAudience.status).toBe(409);
    expect(sameAudience.body.problems).toEqual([
      expect.stringMatching(
        /^authorization\.audience: is the audience of registered upstream "other"/,
      ),
    ]);
    for (const endpoint of [
      'http://169.254.169.254/latest/api/token',
      `${other.url.replace(/\/mcp$/, '')}/token`,
      'http://10.0.0.7/other-token',
    ]) {
      const refused = await exchange(endpoint);
      expect(refused.status).toBe(400);
      expect(refused.body.problems).toEqual([
        expect.stringMatching(
          /^authorization\.tokenEndpoint: is not a token endpoint the configuration trusts/,
        ),
      ]);
    }
    // passthrough would hand every caller's own token to the registered server
    const passthrough = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'x3',
      url: other.url,
      namePrefix: 'x3__',
      authorization: { mode: 'passthrough' },
    });
    expect(passthrough.status).toBe(400);
    expect(passthrough.body.problems).toEqual([
      expect.stringMatching(
        /^authorization\.mode: passthrough is not accepted for a registered upstream/,
      ),
    ]);
    expect(
      (await admin(gateway, 'GET', '/admin/upstreams')).body.upstreams.map(
        (u: { id: string }) => u.id,
      ),
    ).toEqual(['calc', 'idp-user', 'other']);
  });

  it('a static authorization is sent to the registered upstream from the env variable it names', async () => {
    const gateway = await start({}, { MCP_UPSTREAM_SECRET_OTHER: 'Bearer other-secret-51' });
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: other.url,
      authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_OTHER' },
    });
    expect(posted.status).toBe(202);
    expect(posted.body.authorization).toEqual({
      mode: 'static',
      valueEnv: 'MCP_UPSTREAM_SECRET_OTHER',
    });
    await waitForState(gateway, 'other', 'ACTIVE');
    expect(other.requests.some((r) => r.headers.authorization === 'Bearer other-secret-51')).toBe(
      true,
    );
    expect(JSON.stringify((await admin(gateway, 'GET', '/admin/upstreams')).body)).not.toContain(
      'other-secret-51',
    );
  });

  it('a conflict is 409 naming the other source: the id or the prefix of a configured or registered upstream', async () => {
    const gateway = await start();
    const sameId = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'calc',
      url: other.url,
      namePrefix: 'c2_',
    });
    expect(sameId.status).toBe(409);
    expect(sameId.body.problems).toEqual([expect.stringContaining('configured upstream "calc"')]);
    const overlap = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'c2',
      url: other.url,
      namePrefix: 'calc__x',
    });
    expect(overlap.status).toBe(409);
    expect(overlap.body.problems).toEqual([expect.stringContaining('configured upstream "calc"')]);
    expect(
      (
        await admin(gateway, 'POST', '/admin/upstreams', {
          id: 'other',
          url: other.url,
          namePrefix: 'o_',
        })
      ).status,
    ).toBe(202);
    const again = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'other',
      url: legacy.url,
      namePrefix: 'p_',
    });
    expect(again.status).toBe(409);
    expect(again.body.problems).toEqual([expect.stringContaining('registered upstream "other"')]);
    const shorter = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'o',
      url: legacy.url,
      namePrefix: 'o',
    });
    expect(shorter.status).toBe(409);
    expect(shorter.body.problems).toEqual([expect.stringContaining('registered upstream "other"')]);
  });

  it('PATCH disables and enables a registration, DELETE removes it; its tools leave and rejoin the catalog', async () => {
    const gateway = await start();
    await admin(gateway, 'POST', '/admin/upstreams', { id: 'other', url: other.url });
    await waitForState(gateway, 'other', 'ACTIVE');
    await waitForTool(gateway, 'other__add');

    const off = await admin(gateway, 'PATCH', '/admin/upstreams/other', { enabled: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, state: 'DISABLED' });
    expect(Date.parse(off.body.updatedAt)).toBeGreaterThan(Date.parse(off.body.createdAt));
    await waitForTool(gateway, 'other__add', false);

    // memory storage versions its records too: the ETag of each answer, If-Match on a change
    expect(off.headers.get('etag')).toBe(`"${off.body.version}"`);
    const stale = await admin(
      gateway,
      'PATCH',
      '/admin/upstreams/other',
      { enabled: true },
      ADMIN_TOKEN,
      { 'if-match': `"${off.body.version - 1}"` },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.message).toMatch(/^Upstream "other" was changed since it was read/);
    const on = await admin(
      gateway,
      'PATCH',
      '/admin/upstreams/other',
      { enabled: true },
      ADMIN_TOKEN,
      { 'if-match': off.headers.get('etag') ?? '' },
    );
    expect(on.status).toBe(200);
    expect(on.body.version).toBeGreaterThan(off.body.version);
    await waitForState(gateway, 'other', 'ACTIVE');
    await waitForTool(gateway, 'other__add');

    const badPatch = await admin(gateway, 'PATCH', '/admin/upstreams/other', { url: legacy.url });
    expect(badPatch.status).toBe(400);
    expect(badPatch.body.problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/^url: cannot be changed/)]),
    );

    const deleted = await admin(gateway, 'DELETE', '/admin/upstreams/other');
    expect(deleted.status).toBe(200);
    expect((await admin(gateway, 'GET', '/admin/upstreams/other')).status).toBe(404);
    await waitForTool(gateway, 'other__add', false);
    expect((await admin(gateway, 'DELETE', '/admin/upstreams/other')).status).toBe(404);
    expect(
      (await admin(gateway, 'PATCH', '/admin/upstreams/nope', { enabled: false })).status,
    ).toBe(404);

    // configured upstreams are read-only here
    const patchConfigured = await admin(gateway, 'PATCH', '/admin/upstreams/calc', {
      enabled: false,
    });
    expect(patchConfigured.status).toBe(409);
    expect(patchConfigured.body.message).toMatch(/configured in the config file/);
    expect((await admin(gateway, 'DELETE', '/admin/upstreams/calc')).status).toBe(409);
    expect(await toolNames(gateway)).toContain('calc__add');

    // the last attempt's line (lines reach stdout in batches)
    await gateway.waitForOutput(/"action":"upstream\.delete"[^\n]*"upstreamId":"calc"/);
    const actions = auditLines(gateway).map((l) => `${l.action} ${l.upstreamId} ${l.status}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'upstream.update other 200',
        'upstream.delete other 200',
        'upstream.update calc 409',
      ]),
    );
  });

  it('the admin token is required: 401 without or with a wrong one, and /admin is not on the /mcp port', async () => {
    const gateway = await start();
    const none = await admin(gateway, 'GET', '/admin/upstreams', undefined, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await admin(gateway, 'GET', '/admin/upstreams', undefined, 'wrong-token')).status).toBe(
      401,
    );
    const post = await admin(
      gateway,
      'POST',
      '/admin/upstreams',
      { id: 'other', url: other.url },
      'wrong-token',
    );
    expect(post.status).toBe(401);
    expect((await admin(gateway, 'GET', '/admin/upstreams')).body.upstreams).toHaveLength(1);
    await gateway.waitForOutput('"outcome":"denied"');
    expect(auditLines(gateway)).toEqual([
      expect.objectContaining({
        action: 'upstream.register',
        upstreamId: null,
        actor: null,
        status: 401,
        outcome: 'denied',
      }),
    ]);
    const onMcpPort = await fetch(`http://127.0.0.1:${gateway.mcpPort}/admin/upstreams`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(onMcpPort.status).toBe(404);
  });

  it('without an admin credential, reads stay open and every write is 403 with the way to enable it', async () => {
    const gateway = await startGateway(
      {
        mcp: gatewayConfig([], { upstreams: [upstream('calc', calc.url)] }),
        waitReady: true,
      },
      track,
    );
    const list = await admin(gateway, 'GET', '/admin/upstreams', undefined, null);
    expect(list.status).toBe(200);
    expect(list.body.upstreams[0]).toMatchObject({ id: 'calc', origin: 'config' });
    const post = await admin(
      gateway,
      'POST',
      '/admin/upstreams',
      { id: 'other', url: other.url },
      null,
    );
    expect(post.status).toBe(403);
    expect(post.body.message).toMatch(/MCP_ADMIN_TOKEN/);
    expect((await admin(gateway, 'DELETE', '/admin/upstreams/calc', undefined, null)).status).toBe(
      403,
    );
    expect(
      (await admin(gateway, 'GET', '/admin/upstreams', undefined, null)).body.upstreams,
    ).toHaveLength(1);
  });
});
