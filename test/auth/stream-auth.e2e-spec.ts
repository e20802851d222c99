import { request } from 'node:http';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { IntrospectionServer } from '../support/introspection-server';
import { ListenUpstream } from '../support/listen-upstream';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { STANDARD_HEADERS, openLegacySession, postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

/** The gateway's canonical resource URI (RFC 8707): the audience its tokens must carry. */
const RESOURCE = 'https://gateway.test/mcp';
const METADATA_URL = 'https://gateway.test/.well-known/oauth-protected-resource/mcp';
const V = '2026-07-28';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

/** A raw 2026 `subscriptions/listen` (default: for the tools list), with these extra headers. */
function listen(
  url: string,
  id: string,
  headers: Record<string, string>,
  notifications: Record<string, unknown> = { toolsListChanged: true },
): Promise<SseReader> {
  return SseReader.open(
    url,
    'POST',
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'subscriptions/listen',
      ...headers,
    },
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
        notifications,
      },
    }),
  );
}

/** A 2025 session's GET stream (or its refusal), with these extra headers. */
function openGet(url: string, session: string, headers: Record<string, string>) {
  return SseReader.open(url, 'GET', {
    accept: 'text/event-stream',
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
    ...headers,
  });
}

/** One request with any method; resolves with status, headers and body. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, string>,
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of one Prometheus series (0 when absent). */
async function metric(gateway: GatewayProcess, series: string): Promise<number> {
  const text = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/**
 * DESIGN "Side paths keep the main path's rules" against a real authorization server
 * (oidc-provider), on both /mcp listeners: every request on /mcp — POST, the 2025 session's
 * GET stream, DELETE, the 2026 `subscriptions/listen` — is authenticated the same way, with
 * 401 and WWW-Authenticate; a sealed session opens only for the caller that opened it;
 * notification streams are capped per caller (`listen.maxStreamsPerCaller`) as well as in
 * total (`listen.maxStreams`), and a stream ends when its caller's token expires.
 */
describe.each(['fastify', 'node'])(
  'notification streams under mcp.auth jwt (MCP_HTTP_SERVER=%s)',
  (listener) => {
    let as: TestAuthorizationServer;
    let service: TestToolService;
    let gateway: GatewayProcess;
    const open: SseReader[] = [];

    const token = async (subject: string, ttlSeconds?: number): Promise<string> =>
      (
        await as.mint({
          subject,
          resource: RESOURCE,
          ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
        })
      ).access_token;

    /** A 2025 session initialized with this token. */
    async function session(t: string): Promise<string> {
      const init = await rpc(
        gateway.mcpUrl,
        'initialize',
        {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
        bearer(t),
      );
      expect(init.status).toBe(200);
      const id = init.headers.get('mcp-session-id');
      if (id === null) throw new Error('initialize issued no session id');
      return id;
    }

    const kept = <T extends SseReader>(reader: T): T => {
      open.push(reader);
      return reader;
    };

    /** Closes every stream a test opened and waits until the gateway holds none. */
    async function closeAll(): Promise<void> {
      for (const reader of open.splice(0)) reader.close();
      await waitFor(
        async () => (await metric(gateway, 'mcp_gateway_notification_streams_open')) === 0,
        15_000,
        () => 'streams stayed open on the gateway',
      ).catch(() => undefined);
    }

    beforeAll(async () => {
      as = await TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp' } },
        defaultResource: RESOURCE,
      });
      service = await TestToolService.start(
        manifest('ins', [
          tool({ name: 'ins.quote' }),
          tool({ name: 'ins.slow', meta: { timeoutMillis: 30_000 } }),
          tool({ name: 'ins.hang', meta: { timeoutMillis: 30_000 } }),
        ]),
      );
      // ins.slow answers after a few seconds; ins.hang never does (only a cancel ends it)
      service.tools.set('ins.slow', () => ({ delayMs: 4000, body: { content: [] } }));
      service.tools.set('ins.hang', () => ({ hang: true }));
      gateway = await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ins', service, 'ins.')], {
            discovery: { maxToolTimeoutMillis: 30_000 },
          }),
          http: { modernEra: true },
          // three streams in all; two per caller
          listen: { maxStreams: 3, maxStreamsPerCaller: 2, keepAliveMillis: 300 },
          shutdown: { gracePeriodSeconds: 3 },
          auth: {
            mode: 'jwt',
            issuer: as.issuer,
            audience: RESOURCE,
            jwksUrl: as.jwksUrl,
            algorithms: ['ES256'],
            clockSkewSeconds: 0,
          },
        },
        env: { MCP_HTTP_SERVER: listener, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        waitReady: true,
      });
    });

    afterEach(closeAll);

    afterAll(async () => {
      for (const reader of open.splice(0)) reader.close();
      await gateway?.stop();
      await Promise.all([as?.stop(), service?.stop()]);
    });

    it('GET /mcp on a valid session without a token, with "Bearer garbage" or with an expired token is 401 with WWW-Authenticate, and opens no stream', async () => {
      const alice = await token('alice');
      const sid = await session(alice);
      const expired = (
        await as.mint({
          subject: 'alice',
          resource: RESOURCE,
          exp: Math.floor(Date.now() / 1000) - 60,
          iat: Math.floor(Date.now() / 1000) - 120,
        })
      ).access_token;

      const none = kept(await openGet(gateway.mcpUrl, sid, {}));
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toBe(`Bearer resource_metadata="${METADATA_URL}"`);
      expect(none.headers['content-type']).toMatch(/^application\/json/);
      for (const bad of ['Bearer garbage', `Bearer ${expired}`]) {
        const refused = kept(await openGet(gateway.mcpUrl, sid, { authorization: bad }));
        expect(refused.status).toBe(401);
        expect(refused.headers['www-authenticate']).toContain(
          `Bearer resource_metadata="${METADATA_URL}"`,
        );
        expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
        expect(JSON.parse(refused.body || '{}').error).toBe('invalid_token');
      }
      // the same token on the same session opens it
      const ok = kept(await openGet(gateway.mcpUrl, sid, bearer(alice)));
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toMatch(/^text\/event-stream/);
    });

    it('three unauthenticated GETs take no room: an authenticated listen is acknowledged and its GET opens, with listen.maxStreams 3', async () => {
      const alice = await token('alice');
      const sid = await session(alice);
      for (let i = 0; i < 3; i++) {
        const refused = kept(await openGet(gateway.mcpUrl, sid, {}));
        expect(refused.status).toBe(401);
      }
      const bob = await token('bob');
      const stream = kept(await listen(gateway.mcpUrl, 'L-bob', bearer(bob)));
      expect(stream.status).toBe(200);
      const ack = await stream.waitForMessage(() => true);
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params._meta[SUBSCRIPTION_ID]).toBe('L-bob');
      const get = kept(await openGet(gateway.mcpUrl, sid, bearer(alice)));
      expect(get.status).toBe(200);
    });

    it('a listen without a token is 401 with WWW-Authenticate, like every POST', async () => {
      const refused = kept(await listen(gateway.mcpUrl, 'L0', {}));
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${METADATA_URL}"`,
      );
      const garbage = kept(await listen(gateway.mcpUrl, 'L0', { authorization: 'Bearer x.y.z' }));
      expect(garbage.status).toBe(401);
      expect(garbage.headers['www-authenticate']).toContain('error="invalid_token"');
    });

    it("DELETE /mcp is authenticated first (401 without a token), another caller's is 404 and the session lives on, its own caller's ends it; GET of the 2026 era is authenticated first too", async () => {
      const alice = await token('alice');
      const sid = await session(alice);
      const bob = await token('bob');
      const others = await send(gateway.mcpUrl, 'DELETE', {
        'mcp-session-id': sid,
        ...bearer(bob),
      });
      expect(others.status).toBe(404);
      const stillLive = await rpc(gateway.mcpUrl, 'tools/list', undefined, {
        'mcp-session-id': sid,
        ...bearer(alice),
      });
      expect(stillLive.status).toBe(200);
      const anonymous = await send(gateway.mcpUrl, 'DELETE', { 'mcp-session-id': sid });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${METADATA_URL}"`,
      );
      const garbage = await send(gateway.mcpUrl, 'DELETE', {
        'mcp-session-id': sid,
        authorization: 'Bearer garbage',
      });
      expect(garbage.status).toBe(401);
      const allowed = await send(gateway.mcpUrl, 'DELETE', {
        'mcp-session-id': sid,
        ...bearer(alice),
      });
      expect(allowed.status).toBe(200);
      const ended = await rpc(gateway.mcpUrl, 'tools/list', undefined, {
        'mcp-session-id': sid,
        ...bearer(alice),
      });
      expect(ended.status).toBe(404);
      // the 2026 era has no GET stream: still authenticated first
      const modernGet = await send(gateway.mcpUrl, 'GET', {
        accept: 'text/event-stream',
        'mcp-protocol-version': V,
      });
      expect(modernGet.status).toBe(401);
      expect(modernGet.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${METADATA_URL}"`,
      );
      const modernAllowed = await send(gateway.mcpUrl, 'GET', {
        accept: 'text/event-stream',
        'mcp-protocol-version': V,
        ...bearer(alice),
      });
      expect(modernAllowed.status).toBe(405);
    });

    it("a session opened by alice does not open for bob's valid token (GET and POST 404); alice's next token, same sub, keeps it", async () => {
      const sid = await session(await token('alice'));
      const bob = await token('bob');
      const get = kept(await openGet(gateway.mcpUrl, sid, bearer(bob)));
      expect(get.status).toBe(404);
      const post = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { ...bearer(bob), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      );
      expect(post.status).toBe(404);
      const fresh = await token('alice');
      const again = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { ...bearer(fresh), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      );
      expect(again.status).toBe(200);
      expect(again.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
        'ins.hang',
        'ins.quote',
        'ins.slow',
      ]);
    });

    it("bob's notifications/cancelled on alice's session is 404 and cancels nothing (alice's call answers as usual); alice's own cancel aborts her call", async () => {
      const alice = await token('alice');
      const sid = await session(alice);
      const on = (t: string): Record<string, string> => ({
        ...STANDARD_HEADERS,
        ...bearer(t),
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      });
      const cancel = (requestId: number): string =>
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId },
        });

      const slowBefore = service.toolRequests('ins.slow').length;
      const slow = rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'ins.slow', arguments: {} },
        on(alice),
        7,
      );
      await waitFor(() => service.toolRequests('ins.slow').length > slowBefore, 10_000);
      // bob's own valid token, alice's session id and request id
      const stranger = await postRaw(gateway.mcpUrl, cancel(7), on(await token('bob')));
      expect(stranger.status).toBe(404);
      expect(stranger.json.error.message).toBe('Session not found');
      const answered = await slow;
      expect(answered.status).toBe(200);
      expect(answered.json.error).toBeUndefined();
      expect(answered.json.result.isError).not.toBe(true);

      // the session's own caller still cancels: the call that would never answer is cut
      const hangBefore = service.toolRequests('ins.hang').length;
      const hung = rpc(
        gateway.mcpUrl,
        'tools/call',
        { name: 'ins.hang', arguments: {} },
        on(alice),
        8,
      );
      await waitFor(() => service.toolRequests('ins.hang').length > hangBefore, 10_000);
      expect(service.openRequests).toBeGreaterThan(0);
      const own = await postRaw(gateway.mcpUrl, cancel(8), on(alice));
      expect(own.status).toBe(202);
      await waitFor(
        () => service.openRequests === 0,
        15_000,
        () => 'the cancelled call kept running',
      );
      // its event stream ends without a response (MCP 2025-11-25 "Cancellation")
      expect((await hung).text).not.toContain('"id":8');
    });

    it('streams are capped per caller (listen.maxStreamsPerCaller 2): a third listen is -32603 in-band, a third GET 429; another caller still opens one', async () => {
      const before = await metric(
        gateway,
        'mcp_gateway_notification_streams_refused_total{reason="caller_limit"}',
      );
      const alice = await token('alice');
      const sid = await session(alice);
      const first = kept(await listen(gateway.mcpUrl, 'A1', bearer(alice)));
      await first.waitForMessage(() => true);
      const second = kept(await openGet(gateway.mcpUrl, sid, bearer(alice)));
      expect(second.status).toBe(200);

      const third = kept(await listen(gateway.mcpUrl, 'A3', bearer(alice)));
      expect(third.status).toBe(200);
      await third.waitForEnd();
      expect(JSON.parse(third.body)).toEqual({
        jsonrpc: '2.0',
        id: 'A3',
        error: { code: -32603, message: 'Subscription limit reached' },
      });
      const thirdGet = kept(await openGet(gateway.mcpUrl, sid, bearer(alice)));
      expect(thirdGet.status).toBe(429);
      expect(thirdGet.headers['retry-after']).toBe('5');

      // another caller (another sub) still has room below listen.maxStreams 3
      const bob = kept(await listen(gateway.mcpUrl, 'B1', bearer(await token('bob'))));
      const ack = await bob.waitForMessage(() => true);
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(
        await metric(
          gateway,
          'mcp_gateway_notification_streams_refused_total{reason="caller_limit"}',
        ),
      ).toBe(before + 2);

      // the replica's cap still holds: a fourth stream, whoever opens it, is refused (503)
      const carol = await token('carol');
      const full = kept(await openGet(gateway.mcpUrl, await session(carol), bearer(carol)));
      expect(full.status).toBe(503);

      // a stream that closes gives its caller's room back
      first.close();
      await waitFor(
        async () => (await metric(gateway, 'mcp_gateway_notification_streams_open')) === 2,
        15_000,
        () => 'the closed listen was not released',
      );
      const again = kept(await listen(gateway.mcpUrl, 'A4', bearer(alice)));
      expect((await again.waitForMessage(() => true)).params._meta[SUBSCRIPTION_ID]).toBe('A4');
    });

    it('a stream whose token expires is closed (a listen without its closing result), GET and listen alike, and counted', async () => {
      const before = await metric(
        gateway,
        'mcp_gateway_notification_streams_closed_total{reason="token_expired"}',
      );
      const short = await token('dave', 4);
      const sid = await session(short);
      const get = kept(await openGet(gateway.mcpUrl, sid, bearer(short)));
      expect(get.status).toBe(200);
      const stream = kept(await listen(gateway.mcpUrl, 'D1', bearer(short)));
      await stream.waitForMessage(() => true);
      // the token lives 4 s: both streams end soon after, whatever the machine's load
      await get.waitForEnd(30_000);
      await stream.waitForEnd(30_000);
      // an abrupt end (wire notes §2.8): no closing result, the client reconnects with a new token
      expect(stream.messages.filter((m) => 'result' in m)).toEqual([]);
      expect(
        await metric(
          gateway,
          'mcp_gateway_notification_streams_closed_total{reason="token_expired"}',
        ),
      ).toBe(before + 2);
      // and the expired token cannot open another
      const refused = kept(await openGet(gateway.mcpUrl, sid, bearer(short)));
      expect(refused.status).toBe(401);
    });

    it('a GET answers as a POST does when the token cannot be checked (an unknown signing key while the JWKS is down)', async () => {
      const alice = await token('alice');
      const sid = await session(alice);
      await as.rotateKey(true);
      await as.setJwksDown(true);
      try {
        const fresh = await token('alice');
        const post = await postRaw(
          gateway.mcpUrl,
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...bearer(fresh),
          },
        );
        expect(post.status).not.toBe(200);
        const get = kept(await openGet(gateway.mcpUrl, sid, bearer(fresh)));
        expect(get.status).toBe(post.status);
        expect(get.headers['www-authenticate'] ?? null).toBe(post.headers.get('www-authenticate'));
        const del = await send(gateway.mcpUrl, 'DELETE', {
          'mcp-session-id': sid,
          ...bearer(fresh),
        });
        expect(del.status).toBe(post.status);
      } finally {
        await as.setJwksDown(false);
      }
    });
  },
);

/**
 * A sealed session carries its caller to every replica (DESIGN "No sticky sessions"): a second
 * replica with the same MCP_SESSION_KEYS opens alice's session for alice only.
 */
describe('a session bound to its caller, on another replica', () => {
  let as: TestAuthorizationServer;
  let service: TestToolService;
  const replicas: GatewayProcess[] = [];

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    const mcp = {
      ...gatewayConfig([bundle('ins', service, 'ins.')]),
      shutdown: { gracePeriodSeconds: 3 },
      auth: {
        mode: 'jwt',
        issuer: as.issuer,
        audience: RESOURCE,
        jwksUrl: as.jwksUrl,
        algorithms: ['ES256'],
      },
    };
    replicas.push(
      ...(await Promise.all(
        [1, 2].map(() =>
          GatewayProcess.start({
            mcp,
            env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
            waitReady: true,
          }),
        ),
      )),
    );
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all([as?.stop(), service?.stop()]);
  });

  it("alice's session from replica 1 opens on replica 2 for alice (POST, GET) and is 404 for bob", async () => {
    const [one, two] = replicas as [GatewayProcess, GatewayProcess];
    const alice = (await as.mint({ subject: 'alice', resource: RESOURCE })).access_token;
    const bob = (await as.mint({ subject: 'bob', resource: RESOURCE })).access_token;
    const init = await rpc(
      one.mcpUrl,
      'initialize',
      {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
      bearer(alice),
    );
    const sid = init.headers.get('mcp-session-id') ?? '';
    const on = (t: string) => ({
      ...bearer(t),
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25',
    });
    expect((await rpc(two.mcpUrl, 'tools/list', {}, on(alice))).status).toBe(200);
    expect((await rpc(two.mcpUrl, 'tools/list', {}, on(bob))).status).toBe(404);
    const aliceGet = await openGet(two.mcpUrl, sid, bearer(alice));
    const bobGet = await openGet(two.mcpUrl, sid, bearer(bob));
    try {
      expect(aliceGet.status).toBe(200);
      expect(bobGet.status).toBe(404);
      expect(JSON.parse(bobGet.body).error.message).toBe('Session not found');
    } finally {
      aliceGet.close();
      bobGet.close();
    }
  });
});

/**
 * docs/security.md "Sessions and notification streams": a notification stream lives no longer
 * than the token that opened it, nor than its grant, even when the token has no `exp`. With
 * opaque tokens (RFC 7662 introspection, answers without `exp`) and `listen.recheckSeconds: 1`,
 * the introspection answer is flipped while a 2026 listen and a 2025 GET stream are open: a
 * revoked token ({active: false}) or a grant that changed (group dev → ops) ends both, and the
 * listen the gateway held on upstream `sec` with the caller's token (passthrough), counted;
 * an authorization server that cannot answer ends neither. Both /mcp listeners.
 */
describe.each(['fastify', 'node'])(
  'notification streams are rechecked against the authorization server (MCP_HTTP_SERVER=%s)',
  (listener) => {
    const ISSUER = 'https://idp.test';
    /** A resource of `sec`, a 2026 upstream with authorization passthrough granted to dev. */
    const SECRET_URI = 'x26://secret/r1';
    let idp: IntrospectionServer;
    let sec: ListenUpstream;
    let service: TestToolService;
    let gateway: GatewayProcess;
    const open: SseReader[] = [];
    let serial = 0;

    /** A fresh opaque token the IdP answers active for, in this group, without exp. */
    function opaque(group: string): string {
      serial += 1;
      const t = `tok-${listener}-${serial}`;
      idp.answers.set(t, answerFor(t, group));
      return t;
    }
    const answerFor = (t: string, group: string): Record<string, unknown> => ({
      active: true,
      sub: `sub-${t}`,
      scope: 'mcp',
      iss: ISSUER,
      aud: RESOURCE,
      group,
    });

    /**
     * A 2025 GET stream and a 2026 listen (the tools list and a resource of `sec`, so the
     * gateway holds a listen on `sec` carrying the caller's token), both open for this token.
     */
    async function streams(t: string): Promise<{ get: SseReader; listening: SseReader }> {
      const init = await rpc(
        gateway.mcpUrl,
        'initialize',
        {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
        bearer(t),
      );
      expect(init.status).toBe(200);
      const get = await openGet(
        gateway.mcpUrl,
        init.headers.get('mcp-session-id') ?? '',
        bearer(t),
      );
      open.push(get);
      expect(get.status).toBe(200);
      const listening = await listen(gateway.mcpUrl, `L-${t}`, bearer(t), {
        toolsListChanged: true,
        resourceSubscriptions: [SECRET_URI],
      });
      open.push(listening);
      const ack = await listening.waitForMessage(() => true);
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params.notifications.resourceSubscriptions).toEqual([SECRET_URI]);
      await waitFor(
        () => sec.openListens === 1 && sec.authorizations.includes(`Bearer ${t}`),
        15_000,
        () => `the gateway holds ${sec.openListens} listen(s) on sec`,
      );
      return { get, listening };
    }

    /** Waits until the IdP was asked about this token `times` more times. */
    async function asked(t: string, times: number): Promise<void> {
      const count = (): number => idp.asked.filter((a) => a === t).length;
      const target = count() + times;
      await waitFor(
        () => count() >= target,
        30_000,
        () => `the token was rechecked ${count()} times`,
      );
    }

    beforeAll(async () => {
      [idp, sec, service] = await Promise.all([
        IntrospectionServer.start(),
        ListenUpstream.start(['open'], [SECRET_URI]),
        TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })])),
      ]);
      gateway = await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ins', service, 'ins.')], {
            upstreams: [upstream('sec', sec.url, { authorization: { mode: 'passthrough' } })],
          }),
          http: { modernEra: true },
          listen: { keepAliveMillis: 300, recheckSeconds: 1 },
          shutdown: { gracePeriodSeconds: 3 },
          auth: {
            mode: 'jwt',
            issuer: ISSUER,
            audience: RESOURCE,
            introspectionUrl: idp.url,
            introspectionClientId: 'gateway-test',
            introspectionClientSecretEnv: 'TEST_INTROSPECTION_SECRET',
          },
          access: {
            rules: [
              { match: { claim: 'group', value: 'dev' }, sources: ['ins', 'sec'] },
              { match: { claim: 'group', value: 'ops' }, tools: ['ins.quote'] },
            ],
          },
        },
        env: {
          MCP_HTTP_SERVER: listener,
          MCP_SESSION_KEYS: TEST_SESSION_KEYS,
          TEST_INTROSPECTION_SECRET: 'gateway-test-secret',
        },
        waitReady: true,
      });
      // sec's listen support is known once its tools are published
      const probe = opaque('dev');
      await waitFor(async () => {
        const tools = await rpc(gateway.mcpUrl, 'tools/list', {}, bearer(probe));
        return (tools.json?.result?.tools ?? []).some(
          (t: { name: string }) => t.name === 'sec__open',
        );
      }, 30_000);
    });

    afterEach(async () => {
      for (const reader of open.splice(0)) reader.close();
      idp.behaviour.status = 200;
      await waitFor(() => sec.openListens === 0, 15_000).catch(() => undefined);
    });

    afterAll(async () => {
      for (const reader of open.splice(0)) reader.close();
      await gateway?.stop();
      await Promise.all([idp?.stop(), sec?.stop(), service?.stop()]);
    });

    it('a token the authorization server no longer answers active for ends its listen (and the upstream listen on sec carrying it) and its GET stream (token_revoked), though it has no exp', async () => {
      const before = await metric(
        gateway,
        'mcp_gateway_notification_streams_closed_total{reason="token_revoked"}',
      );
      const t = opaque('dev');
      const { get, listening } = await streams(t);
      idp.answers.set(t, { active: false });
      expect((await rpc(gateway.mcpUrl, 'tools/list', {}, { ...bearer(t) })).status).toBe(401);
      await get.waitForEnd(30_000);
      await listening.waitForEnd(30_000);
      // an abrupt end, as at expiry: no closing result, the client comes back with a new token
      expect(listening.messages.filter((m) => 'result' in m)).toEqual([]);
      // and the listen on sec that carried the revoked token ends with it
      await waitFor(
        () => sec.openListens === 0,
        15_000,
        () => 'the listen on sec stayed open',
      );
      expect(
        await metric(
          gateway,
          'mcp_gateway_notification_streams_closed_total{reason="token_revoked"}',
        ),
      ).toBe(before + 2);
    });

    it("a 2025 session's subscription bridged to a listen on sec carries its token only while a recheck accepts it: revoked, the upstream listen ends", async () => {
      const t = opaque('dev');
      const session = await openLegacySession(gateway.mcpUrl, bearer(t));
      const subscribed = await rpc(
        gateway.mcpUrl,
        'resources/subscribe',
        { uri: SECRET_URI },
        session,
      );
      expect(subscribed.json.result).toEqual({});
      await waitFor(
        () => sec.openListens === 1 && sec.authorizations.includes(`Bearer ${t}`),
        15_000,
        () => `the gateway holds ${sec.openListens} listen(s) on sec`,
      );
      // rechecked and still accepted: the listen stays
      await asked(t, 2);
      expect(sec.openListens).toBe(1);
      idp.answers.set(t, { active: false });
      await waitFor(
        () => sec.openListens === 0,
        15_000,
        () => 'the bridged listen on sec stayed open',
      );
    });

    it('a token carrying the admin scope: its listen reaches sec without it (never passed through), and is still rechecked: revoked, the listen ends', async () => {
      serial += 1;
      const t = `tok-${listener}-admin-${serial}`;
      idp.answers.set(t, { ...answerFor(t, 'dev'), scope: 'mcp mcp:admin' });
      const listening = await listen(gateway.mcpUrl, `LA-${t}`, bearer(t), {
        toolsListChanged: true,
        resourceSubscriptions: [SECRET_URI],
      });
      open.push(listening);
      const ack = await listening.waitForMessage(() => true);
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      await waitFor(
        () => sec.openListens === 1,
        15_000,
        () => `the gateway holds ${sec.openListens} listen(s) on sec`,
      );
      expect(sec.authorizations.join('\n')).not.toContain(t);
      await asked(t, 1);
      idp.answers.set(t, { active: false });
      await listening.waitForEnd(30_000);
      await waitFor(
        () => sec.openListens === 0,
        15_000,
        () => 'the listen on sec stayed open',
      );
    });

    it('a token whose grant changed (group dev → ops) ends its listen (and the upstream listen on sec) and its GET stream (grant_changed)', async () => {
      const before = await metric(
        gateway,
        'mcp_gateway_notification_streams_closed_total{reason="grant_changed"}',
      );
      const t = opaque('dev');
      const { get, listening } = await streams(t);
      idp.answers.set(t, answerFor(t, 'ops'));
      await get.waitForEnd(30_000);
      await listening.waitForEnd(30_000);
      expect(listening.messages.filter((m) => 'result' in m)).toEqual([]);
      await waitFor(
        () => sec.openListens === 0,
        15_000,
        () => 'the listen on sec stayed open',
      );
      expect(
        await metric(
          gateway,
          'mcp_gateway_notification_streams_closed_total{reason="grant_changed"}',
        ),
      ).toBe(before + 2);
      // the same token with its new grant still opens a stream (a new one, for the new grant)
      const again = await listen(gateway.mcpUrl, 'L-again', bearer(t));
      open.push(again);
      expect((await again.waitForMessage(() => true)).method).toBe(
        'notifications/subscriptions/acknowledged',
      );
    });

    it('an authorization server that cannot answer (5xx) ends no stream: the recheck is tried again, and a revocation after it still ends them', async () => {
      const t = opaque('dev');
      const { get, listening } = await streams(t);
      idp.behaviour.status = 500;
      // both streams rechecked at least twice each while the IdP fails
      await asked(t, 4);
      expect(get.ended).toBe(false);
      expect(listening.ended).toBe(false);
      idp.behaviour.status = 200;
      await asked(t, 2);
      expect(get.ended).toBe(false);
      expect(listening.ended).toBe(false);
      idp.answers.set(t, { active: false });
      await get.waitForEnd(30_000);
      await listening.waitForEnd(30_000);
    });
  },
);
