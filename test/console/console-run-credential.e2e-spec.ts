import type { Browser, Locator, Page, Request } from 'playwright-core';
import { DESKTOP, launchChromium, pageErrors, waitForText } from '../support/browser';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream, V2Upstream, type UpstreamRequest } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';

/**
 * The console's "Run" never sends the admin credential (docs/console.md "Access",
 * docs/security.md "The management port and the operator console"): the admin token authorizes
 * /admin only; "Run" sends the caller token the operator enters for it, or none. Real upstreams
 * with `authorization: passthrough` record the Authorization they receive: a 2025 one (v1 SDK) and
 * a 2026 one (v2 SDK).
 */

const ADMIN_TOKEN = 'console-run-admin-9f3e1b';
const CALLER_TOKEN = 'console-run-caller-2a77d0';
/** The gateway's canonical resource URI (RFC 8707): the audience of every token it accepts. */
const RESOURCE = 'https://gateway.test/mcp';

/** Every Authorization value an upstream received, on any request. */
const authorizations = (up: { requests: readonly UpstreamRequest[] }): string[] =>
  up.requests.map((r) => r.headers.authorization).filter((a): a is string => a !== undefined);
/** The Authorization of each tools/call the upstream received ('' for none). */
const callAuthorizations = (up: { requestsFor(m: string): UpstreamRequest[] }): string[] =>
  up.requestsFor('tools/call').map((r) => r.headers.authorization ?? '');

/** Every request the page made, with the Authorization it carried. */
function recordRequests(page: Page): { url: string; authorization?: string }[] {
  const seen: { url: string; authorization?: string }[] = [];
  page.on('request', (req: Request) => {
    seen.push({ url: req.url(), authorization: req.headers().authorization });
  });
  return seen;
}

async function enterAdminToken(page: Page, value: string): Promise<void> {
  await page.getByLabel('Admin token').fill(value);
  await page.getByRole('button', { name: 'Use token' }).click();
}

async function enterCallerToken(page: Page, value: string): Promise<void> {
  await page.getByLabel('Caller token for Run').fill(value);
  await page.getByRole('button', { name: 'Use for Run' }).click();
}

/** Opens the tool's Run form (once) and runs it; `fill` sets its arguments. */
async function run(card: Locator, name: string, fill?: () => Promise<void>): Promise<void> {
  const form = card.getByRole('form', { name: `Run ${name}` });
  if ((await form.count()) === 0 || !(await form.isVisible()))
    await card.getByRole('button', { name: 'Run', exact: true }).click();
  await fill?.();
  await card.getByRole('button', { name: `Run ${name}` }).click();
}

/** Waits until the card shows a result or a failure, and returns its text. */
async function outcome(card: Locator, previous: string | null): Promise<string> {
  const result = card.locator('[data-field=result]');
  let text = '';
  await waitForText(result, /\S/);
  // a second run replaces the block: wait for a different one than before
  for (let i = 0; i < 200; i++) {
    text = (await result.first().textContent()) ?? '';
    if (text !== previous && !/^Calling/.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return text;
}

/**
 * A bearer sent straight to /mcp, as an agent or a script would: a 2025 initialize, a 2025
 * tools/call of `pt__flaky` (in the session the initialize opened, if it did) and a 2026 one.
 */
async function callsWith(mcpUrl: string, bearer: string): Promise<Response[]> {
  const post = (body: object, headers: Record<string, string> = {}) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'script', version: '1' },
    },
  });
  const session = init.headers.get('mcp-session-id');
  const legacy = await post(
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'pt__flaky', arguments: {} } },
    session === null ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
  );
  const modern = await post(
    {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'pt__flaky',
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'script', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'pt__flaky' },
  );
  return [init, legacy, modern];
}

/**
 * The static admin token sent straight to /mcp on every request kind (the calls of
 * callsWith, the GET stream, a DELETE): 401 invalid_token with WWW-Authenticate each time,
 * whatever the console does.
 */
async function expectAdminRefusedOnMcp(mcpUrl: string, admin: string): Promise<void> {
  const auth = { authorization: `Bearer ${admin}` };
  const answers = [
    ...(await callsWith(mcpUrl, admin)),
    await fetch(mcpUrl, { headers: { ...auth, accept: 'text/event-stream' } }),
    await fetch(mcpUrl, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': 'x' } }),
  ];
  for (const res of answers) {
    const text = await res.text();
    expect([res.status, res.headers.get('www-authenticate')]).toEqual([
      401,
      expect.stringMatching(/^Bearer .*error="invalid_token".*admin credential/),
    ]);
    expect(text).not.toContain(admin);
  }
}

/**
 * Waits (up to 20 s) until the upstream has received `count` tools/call requests; `shown` (the
 * card's text) is in the failure, so a run that never reached the upstream says what it showed.
 */
async function waitForCalls(up: V1Upstream, count: number, shown?: string): Promise<void> {
  for (let i = 0; i < 200 && up.requestsFor('tools/call').length < count; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect({ calls: up.requestsFor('tools/call').length, shown }).toEqual({ calls: count, shown });
}

describe('console Run with MCP_ADMIN_TOKEN (mcp.auth none): the admin token never reaches /mcp', () => {
  let v1: V1Upstream;
  let v2: V2Upstream;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let sent: { url: string; authorization?: string }[];

  beforeAll(async () => {
    [v1, v2] = await Promise.all([V1Upstream.start(), V2Upstream.start()]);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          registry: { refreshIntervalSeconds: 2 },
          upstreams: [
            upstream('pt', v1.url, { authorization: { mode: 'passthrough' } }),
            upstream('pt2', v2.url, { authorization: { mode: 'passthrough' } }),
          ],
        }),
        http: { allowedOrigins: ['http://127.0.0.1:*'] },
      },
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: DESKTOP });
    errors = pageErrors(page);
    sent = recordRequests(page);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await Promise.all([v1?.stop(), v2?.stop()]);
  });

  const card = (name: string) => page.locator(`[data-tool="${name}"]`);

  it('after the admin token is entered, Run on a passthrough upstream sends no Authorization (2025 and 2026 upstreams)', async () => {
    await page.goto(`${gateway.managementUrl}/console`);
    await enterAdminToken(page, ADMIN_TOKEN);
    await waitForText(page.locator('#access'), /^Admin: changes allowed\.$/);
    await page.goto(`${gateway.managementUrl}/console#tools`);
    expect(await page.locator('#caller-token-status').textContent()).toBe('Run sends no token.');

    await card('pt__flaky').waitFor();
    await run(card('pt__flaky'), 'pt__flaky');
    expect(await outcome(card('pt__flaky'), null)).toMatch(/isError\s*true/);
    await run(card('pt2__shout'), 'pt2__shout', () =>
      card('pt2__shout').getByLabel('text').fill('quiet'),
    );
    expect(await outcome(card('pt2__shout'), null)).toContain('QUIET');

    expect(callAuthorizations(v1)).toEqual(['']);
    expect(callAuthorizations(v2)).toEqual(['']);
    for (const up of [v1, v2]) expect(authorizations(up).join('\n')).not.toContain(ADMIN_TOKEN);
  });

  it('Run sends the caller token entered for it, and only that', async () => {
    await enterCallerToken(page, CALLER_TOKEN);
    expect(await page.locator('#caller-token-status').textContent()).toMatch(
      /^Run sends the caller token you entered/,
    );
    const before = await card('pt__flaky').locator('[data-field=result]').textContent();
    await run(card('pt__flaky'), 'pt__flaky');
    // the card's text alone cannot tell this run's result from a re-render: wait for the call
    await waitForCalls(v1, 2, await outcome(card('pt__flaky'), before));
    await run(card('pt2__shout'), 'pt2__shout', () =>
      card('pt2__shout').getByLabel('text').fill('again'),
    );
    await waitForText(card('pt2__shout').locator('[data-field=result]'), /AGAIN/);

    expect(callAuthorizations(v1)).toEqual(['', `Bearer ${CALLER_TOKEN}`]);
    expect(callAuthorizations(v2)).toEqual(['', `Bearer ${CALLER_TOKEN}`]);
    for (const up of [v1, v2]) expect(authorizations(up).join('\n')).not.toContain(ADMIN_TOKEN);
  });

  it('keeps the two apart: the admin token is refused as the caller token, and the caller token as the admin token', async () => {
    await enterCallerToken(page, ADMIN_TOKEN);
    expect(await page.locator('#caller-token-status').textContent()).toMatch(
      /That is the admin token: it authorizes \/admin only/,
    );
    await enterAdminToken(page, CALLER_TOKEN);
    expect(await waitForText(page.locator('#action-status'), /caller token/)).toMatch(
      /the admin token must be another credential/,
    );
    // neither changed: Run still sends the caller token, /admin still takes the admin token
    await run(card('pt__flaky'), 'pt__flaky');
    await waitForCalls(v1, 3);
    expect(callAuthorizations(v1).at(-1)).toBe(`Bearer ${CALLER_TOKEN}`);
    expect(await page.locator('#access').textContent()).toBe('Admin: changes allowed.');

    await page.getByRole('button', { name: 'Forget caller token' }).click();
    expect(await page.locator('#caller-token-status').textContent()).toBe('Run sends no token.');
    const before = await card('pt__flaky').locator('[data-field=result]').textContent();
    await run(card('pt__flaky'), 'pt__flaky');
    await waitForCalls(v1, 4, await outcome(card('pt__flaky'), before));
    expect(callAuthorizations(v1).at(-1)).toBe('');
  });

  it('/mcp itself refuses the admin token on every request kind (401), and no upstream sees it', async () => {
    const calls = [v1, v2].map((up) => up.requestsFor('tools/call').length);
    await expectAdminRefusedOnMcp(gateway.mcpUrl, ADMIN_TOKEN);
    expect([v1, v2].map((up) => up.requestsFor('tools/call').length)).toEqual(calls);
    for (const up of [v1, v2]) expect(authorizations(up).join('\n')).not.toContain(ADMIN_TOKEN);
  });

  it('sent the admin token only to /admin on the management port, and the caller token only to /mcp', () => {
    const management = new URL(gateway.managementUrl).origin;
    const withAdmin = sent.filter((s) => s.authorization === `Bearer ${ADMIN_TOKEN}`);
    expect(withAdmin.length).toBeGreaterThan(0);
    for (const s of withAdmin) {
      const url = new URL(s.url);
      expect([s.url, url.origin, url.pathname.startsWith('/admin/')]).toEqual([
        s.url,
        management,
        true,
      ]);
    }
    const withCaller = sent.filter((s) => s.authorization === `Bearer ${CALLER_TOKEN}`);
    expect(withCaller.length).toBeGreaterThan(0);
    for (const s of withCaller) expect(s.url).toBe(gateway.mcpUrl);
    expect(sent.filter((s) => s.url === gateway.mcpUrl).length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});

describe('console Run with mcp.auth jwt (and the node:http /mcp listener): the admin JWT never reaches /mcp or an upstream', () => {
  let as: TestAuthorizationServer;
  let v1: V1Upstream;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let sent: { url: string; authorization?: string }[];
  let adminJwt: string;
  let callerJwt: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp mcp:admin' } },
      defaultResource: RESOURCE,
    });
    v1 = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          registry: { refreshIntervalSeconds: 2 },
          upstreams: [upstream('pt', v1.url, { authorization: { mode: 'passthrough' } })],
        }),
        http: { allowedOrigins: ['http://127.0.0.1:*'] },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          requiredScopes: ['mcp'],
          algorithms: ['ES256'],
        },
      },
      // the opt-in listener: "Run" is an agent's call like any other, whichever serves /mcp
      env: { MCP_HTTP_SERVER: 'node' },
      waitReady: true,
    });
    adminJwt = (await as.mint({ subject: 'ops-alice', scope: 'mcp mcp:admin' })).access_token;
    callerJwt = (await as.mint({ subject: 'carol', scope: 'mcp' })).access_token;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: DESKTOP });
    sent = recordRequests(page);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await v1?.stop();
    await as?.stop();
  });

  const card = () => page.locator('[data-tool="pt__flaky"]');

  it('with the admin JWT entered and no caller token, Run is refused by /mcp (401) and the upstream sees no call', async () => {
    await page.goto(`${gateway.managementUrl}/console`);
    await enterAdminToken(page, adminJwt);
    await waitForText(page.locator('#access'), /^Admin: changes allowed\.$/);
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await card().waitFor();
    await run(card(), 'pt__flaky');
    expect(await outcome(card(), null)).toMatch(
      /HTTP 401: a valid caller token is required; enter one under "Caller token for Run"/,
    );
    expect(callAuthorizations(v1)).toEqual([]);
    expect(authorizations(v1).join('\n')).not.toContain(adminJwt);
  });

  it("Run with the caller's JWT: the upstream receives that token, never the admin JWT", async () => {
    await enterCallerToken(page, callerJwt);
    const before = await card().locator('[data-field=result]').textContent();
    await run(card(), 'pt__flaky');
    expect(await outcome(card(), before)).toMatch(/isError\s*true/);
    await waitForCalls(v1, 1);
    expect(callAuthorizations(v1)).toEqual([`Bearer ${callerJwt}`]);
    expect(authorizations(v1).join('\n')).not.toContain(adminJwt);

    // the admin JWT is refused as the caller token; Run keeps the caller's
    await enterCallerToken(page, adminJwt);
    expect(await page.locator('#caller-token-status').textContent()).toMatch(
      /That is the admin token/,
    );
    const again = await card().locator('[data-field=result]').textContent();
    await run(card(), 'pt__flaky');
    await waitForCalls(v1, 2, await outcome(card(), again));
    expect(callAuthorizations(v1)).toEqual([`Bearer ${callerJwt}`, `Bearer ${callerJwt}`]);
    expect(authorizations(v1).join('\n')).not.toContain(adminJwt);

    for (const s of sent.filter((r) => r.authorization === `Bearer ${adminJwt}`))
      expect(new URL(s.url).pathname).toMatch(/^\/admin\//);
    expect(
      sent
        .filter((r) => r.url === gateway.mcpUrl)
        .every((r) => r.authorization !== `Bearer ${adminJwt}`),
    ).toBe(true);
  });

  it('a token carrying the admin scope is served on /mcp, but never passed through: the upstream gets no Authorization (2025 session and 2026 calls)', async () => {
    const before = callAuthorizations(v1).length;
    const answers = await callsWith(gateway.mcpUrl, adminJwt);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    const texts = await Promise.all(answers.map((r) => r.text()));
    texts.forEach((text, i) => expect(text).toContain(`"id":${i + 1}`));
    expect(callAuthorizations(v1).slice(before)).toEqual(['', '']);
    expect(authorizations(v1).join('\n')).not.toContain(adminJwt);
  });
});
