import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { V1Upstream } from '../support/mcp-upstreams';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';
const V = '2026-07-28';
const SECRET_URI = 'x26://secret/r1';
const UB_URI = 'x26://ub/r1';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** The v1 SDK client's drain can wait out the grace period for idle pooled connections. */
const SHORT_GRACE = { gracePeriodSeconds: 3 };

const envelope = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** A raw 2026 listen for a caller (the stream's bytes are checked). */
function listen(url: string, token: string, id: string, notifications: unknown) {
  return SseReader.open(
    url,
    'POST',
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'subscriptions/listen',
      authorization: `Bearer ${token}`,
    },
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { _meta: envelope, notifications },
    }),
  );
}

/** A 2025 session of this caller that declares elicitation; its headers for later POSTs. */
async function session(url: string, token: string): Promise<Record<string, string>> {
  const init = await rpc(
    url,
    'initialize',
    {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    },
    { authorization: `Bearer ${token}` },
  );
  const id = init.headers.get('mcp-session-id');
  if (id === null) throw new Error(`initialize issued no session id: ${init.text}`);
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'mcp-session-id': id,
    authorization: `Bearer ${token}`,
  };
}

/** A tools/call on an SSE answer: the requests it relays to the client, then its result. */
async function streamedCall(
  url: string,
  headers: Record<string, string>,
  name: string,
  args: Record<string, unknown>,
): Promise<SseReader> {
  return SseReader.open(
    url,
    'POST',
    headers,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name, arguments: args },
    }),
  );
}

/** POSTs a client's JSON-RPC answer to a relayed request. */
function answer(url: string, headers: Record<string, string>, id: unknown, result: unknown) {
  return postRaw(url, JSON.stringify({ jsonrpc: '2.0', id, result }), headers);
}

const resultText = (m: any): string =>
  (m?.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('');

/**
 * Every side path is bound to its caller and its grant (docs/security.md "Notification
 * streams", "Answers to relayed requests"). Caller A (groups dev) is granted every upstream,
 * caller B (groups ops) only `ub`: B's listen is cut to `ub` (no listen on `sec`, which would
 * carry B's token through passthrough; none of `sec`'s notifications or list changes), and B
 * cannot answer A's relayed (2025 upstream) or bridged (2026 upstream) requests, on either
 * replica; a relay id of another gateway identity with the same keys does not open; relay ids
 * expire.
 */
describe('side paths bound to the caller: subscriptions/listen, resources/subscribe, relayed answers', () => {
  let as: TestAuthorizationServer;
  let ub: ListenUpstream;
  let sec: ListenUpstream;
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  let g1: GatewayProcess;
  let g2: GatewayProcess;
  let other: GatewayProcess;
  let tokenA: string;
  let tokenB: string;
  /** A's `sub` with B's grant. */
  let tokenA2: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    [ub, sec, repo, mr] = await Promise.all([
      ListenUpstream.start(['echo'], [UB_URI]),
      ListenUpstream.start(['open'], [SECRET_URI]),
      V1Upstream.start({}, { subscribable: true }),
      V2MrtrUpstream.start(),
    ]);
    const auth = {
      mode: 'jwt',
      issuer: as.issuer,
      audience: RESOURCE,
      jwksUrl: as.jwksUrl,
      algorithms: ['ES256'],
    };
    const access = {
      rules: [
        { match: { claim: 'groups', value: 'dev' }, sources: ['ub', 'sec', 'repo', 'mr'] },
        { match: { claim: 'groups', value: 'ops' }, sources: ['ub'] },
      ],
    };
    const calls = { timeouts: { callMillis: 30_000 } };
    const mcp = {
      ...gatewayConfig([], {
        registry: { refreshIntervalSeconds: 1 },
        upstreams: [
          upstream('ub', ub.url),
          upstream('sec', sec.url, { authorization: { mode: 'passthrough' } }),
          upstream('repo', repo.url, calls),
          upstream('mr', mr.url, calls),
        ],
        shutdown: SHORT_GRACE,
      }),
      http: { modernEra: true },
      listen: { keepAliveMillis: 200 },
      auth,
      access,
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS };
    // another gateway identity with the same keys, whose relay ids live 1 s
    const otherMcp = {
      ...gatewayConfig([], {
        upstreams: [upstream('repo', repo.url, calls)],
        shutdown: SHORT_GRACE,
      }),
      identity: 'other-gateway',
      session: { pendingInputMillis: 1000 },
      auth,
      access,
    };
    const start = async (config: Record<string, unknown>): Promise<GatewayProcess> => {
      const gateway = GatewayProcess.spawn({ mcp: config, env });
      await gateway.waitForListening(90_000);
      await gateway.waitForReady(90_000);
      return gateway;
    };
    [g1, g2, other] = await Promise.all([start(mcp), start(mcp), start(otherMcp)]);
    tokenA = (await as.mint({ subject: 'alice', claims: { groups: ['dev'] } })).access_token;
    tokenB = (await as.mint({ subject: 'bob', claims: { groups: ['ops'] } })).access_token;
    tokenA2 = (await as.mint({ subject: 'alice', claims: { groups: ['ops'] } })).access_token;
    // both 2026 upstreams' listen support is known once their tools are published
    await waitFor(async () => {
      const tools = await rpc(g1.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${tokenA}` });
      const names = (tools.json?.result?.tools ?? []).map((t: { name: string }) => t.name);
      return names.includes('ub__echo') && names.includes('sec__open');
    }, 30_000);
  }, 200_000);

  afterAll(async () => {
    await Promise.all([g1?.stop(), g2?.stop(), other?.stop()]);
    await Promise.all([as?.stop(), ub?.stop(), sec?.stop(), repo?.stop(), mr?.stop()]);
  });

  describe('subscriptions/listen (2026) and resources/subscribe (2025) follow mcp.access', () => {
    let streamA: SseReader;
    let streamB: SseReader;

    afterAll(() => {
      streamA?.close();
      streamB?.close();
    });

    it('B (granted only ub) listening for x26://secret/r1: not honoured, no listen reaches sec, none of its updates is relayed', async () => {
      const secListens = sec.listensSeen.length;
      const filter = { toolsListChanged: true, resourceSubscriptions: [SECRET_URI, UB_URI] };
      streamB = await listen(g1.mcpUrl, tokenB, 'B1', filter);
      const ackB = await streamB.waitForMessage(() => true);
      expect(ackB.params.notifications).toEqual({
        toolsListChanged: true,
        resourceSubscriptions: [UB_URI],
      });
      streamA = await listen(g1.mcpUrl, tokenA, 'A1', filter);
      const ackA = await streamA.waitForMessage(() => true);
      // the granted caller: both URIs honoured, a listen on each upstream
      expect(ackA.params.notifications).toEqual(filter);
      await waitFor(() => sec.openListens === 1 && ub.openListens === 2, 15_000);
      expect(sec.listensSeen.length).toBe(secListens + 1);
      expect(sec.authorizations).not.toContain(`Bearer ${tokenB}`);
      expect(sec.authorizations).toContain(`Bearer ${tokenA}`);

      sec.notifyResourceUpdated(SECRET_URI);
      sec.notifyToolsChanged();
      await streamA.waitForMessage(
        (m) => m.method === 'notifications/resources/updated' && m.params.uri === SECRET_URI,
      );
      await streamA.waitForMessage((m) => m.method === 'notifications/tools/list_changed');
      // a marker on B's own stream, sent after sec's notifications reached A
      ub.notifyResourceUpdated(UB_URI);
      const marker = await streamB.waitForMessage(
        (m) => m.method === 'notifications/resources/updated',
      );
      expect(marker.params).toEqual({ uri: UB_URI, _meta: { [SUBSCRIPTION_ID]: 'B1' } });
      expect(streamB.messages.map((m) => [m.method, m.params?.uri])).toEqual([
        ['notifications/subscriptions/acknowledged', undefined],
        ['notifications/resources/updated', UB_URI],
      ]);
      expect(sec.authorizations).not.toContain(`Bearer ${tokenB}`);
    });

    it('a list change of a source outside the grant is not told to B; one inside it is', async () => {
      const catalogChanges = (s: SseReader) =>
        s.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
      const toldA = catalogChanges(streamA);
      sec.addTool('late');
      await waitFor(async () => {
        const tools = await rpc(g1.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${tokenA}` });
        return (tools.json?.result?.tools ?? []).some(
          (t: { name: string }) => t.name === 'sec__late',
        );
      }, 20_000);
      // published: A is told by the catalog (besides sec's own relayed notification)
      await waitFor(() => catalogChanges(streamA) >= toldA + 2, 10_000);
      // keep-alive comments written after the publication: B had its chance to be told
      const comments = streamB.comments.length;
      await waitFor(() => streamB.comments.length >= comments + 2, 10_000);
      expect(catalogChanges(streamB)).toBe(0);

      ub.addTool('more');
      const told = await streamB.waitForMessage(
        (m) => m.method === 'notifications/tools/list_changed',
        20_000,
      );
      expect(told.params._meta[SUBSCRIPTION_ID]).toBe('B1');
    });

    it('2025 GET stream: a list change of a source outside the grant is not told to B; one inside it is', async () => {
      const getStream = async (token: string): Promise<SseReader> => {
        const headers = await session(g1.mcpUrl, token);
        const stream = await SseReader.open(g1.mcpUrl, 'GET', {
          accept: 'text/event-stream',
          'mcp-protocol-version': headers['mcp-protocol-version']!,
          'mcp-session-id': headers['mcp-session-id']!,
          authorization: `Bearer ${token}`,
        });
        expect(stream.status).toBe(200);
        return stream;
      };
      const getA = await getStream(tokenA);
      const getB = await getStream(tokenB);
      try {
        const changes = (s: SseReader) =>
          s.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
        sec.addTool('later');
        await getA.waitForMessage((m) => m.method === 'notifications/tools/list_changed', 20_000);
        // keep-alive comments written after the publication: B had its chance to be told
        const comments = getB.comments.length;
        await waitFor(() => getB.comments.length >= comments + 2, 10_000);
        expect(changes(getB)).toBe(0);

        ub.addTool('evenmore');
        await getB.waitForMessage((m) => m.method === 'notifications/tools/list_changed', 20_000);
      } finally {
        getA.close();
        getB.close();
      }
    });

    it('2025: resources/subscribe of a resource outside the grant is answered as an unknown one and never forwarded', async () => {
      const headersB = await session(g1.mcpUrl, tokenB);
      const subscribesBefore = repo.requestsFor('resources/subscribe').length;
      const secCalls = sec.authorizations.length;
      const answers = await Promise.all(
        [SECRET_URI, 'repo://readme', 'nothing://here'].map((uri) =>
          rpc(g1.mcpUrl, 'resources/subscribe', { uri }, headersB),
        ),
      );
      for (const [i, uri] of [SECRET_URI, 'repo://readme'].entries()) {
        expect(answers[i]!.json.error.code).toBe(answers[2]!.json.error.code);
        expect(answers[i]!.json.error.message).toBe(`Resource not found: ${uri}`);
      }
      expect(answers[2]!.json.error.message).toBe('Resource not found: nothing://here');
      expect(repo.requestsFor('resources/subscribe').length).toBe(subscribesBefore);
      expect(sec.authorizations.slice(secCalls)).not.toContain(`Bearer ${tokenB}`);
    });
  });

  describe('2025 resource subscriptions live in their session, and end with its subscribing token', () => {
    /** A's GET stream of a session with this token, and the headers of that session. */
    const subscriber = async (
      token: string,
    ): Promise<{ headers: Record<string, string>; get: SseReader }> => {
      const headers = await session(g1.mcpUrl, token);
      const get = await SseReader.open(g1.mcpUrl, 'GET', {
        accept: 'text/event-stream',
        'mcp-protocol-version': headers['mcp-protocol-version']!,
        'mcp-session-id': headers['mcp-session-id']!,
        authorization: headers.authorization!,
      });
      expect(get.status).toBe(200);
      return { headers, get };
    };
    const updatesOf = (get: SseReader, uri: string): number =>
      get.messages.filter(
        (m) =>
          m.method === 'notifications/resources/updated' &&
          (m.params as { uri?: unknown } | undefined)?.uri === uri,
      ).length;
    const upstreamHolds = (uri: string): boolean =>
      [...repo.subscriptions.values()].some((uris) => uris.has(uri));

    it('a resources/subscribe or unsubscribe without a session is refused (400, -32600) and never forwarded: another caller cannot end what A holds', async () => {
      const uri = 'repo://files/sessionless';
      const a = await subscriber(tokenA);
      try {
        const subscribed = await rpc(g1.mcpUrl, 'resources/subscribe', { uri }, a.headers);
        expect(subscribed.json.result).toEqual({});
        expect(upstreamHolds(uri)).toBe(true);
        // C has A's grant, another sub, and sends no Mcp-Session-Id
        const tokenC = (await as.mint({ subject: 'carol', claims: { groups: ['dev'] } }))
          .access_token;
        const sessionless = {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          authorization: `Bearer ${tokenC}`,
        };
        const before = {
          subscribe: repo.requestsFor('resources/subscribe').length,
          unsubscribe: repo.requestsFor('resources/unsubscribe').length,
        };
        for (const method of ['resources/unsubscribe', 'resources/subscribe']) {
          const answer = await rpc(g1.mcpUrl, method, { uri }, sessionless);
          // an invalid request, as the era maps -32600 (HTTP 400)
          expect([answer.status, answer.json.error.code]).toEqual([400, -32600]);
          expect(answer.json.error.message).toBe(
            `${method} needs a session: a subscription's updates are written on its session's GET stream; send the Mcp-Session-Id that initialize gave`,
          );
        }
        expect(repo.requestsFor('resources/subscribe').length).toBe(before.subscribe);
        expect(repo.requestsFor('resources/unsubscribe').length).toBe(before.unsubscribe);
        expect(upstreamHolds(uri)).toBe(true);
        await repo.notifyResourceUpdated(uri);
        await a.get.waitForMessage(
          (m) =>
            m.method === 'notifications/resources/updated' &&
            (m.params as { uri?: unknown } | undefined)?.uri === uri,
          10_000,
        );
        const unsubscribed = await rpc(g1.mcpUrl, 'resources/unsubscribe', { uri }, a.headers);
        expect(unsubscribed.json.result).toEqual({});
        expect(upstreamHolds(uri)).toBe(false);
      } finally {
        a.get.close();
      }
    });

    it("after the subscribing token's expiry no update reaches the session (not even on a GET stream opened with a fresh token, nor after another URI was subscribed with one), and the upstream is told resources/unsubscribe", async () => {
      const uri = 'repo://files/expiring';
      const later = 'repo://files/subscribed-later';
      const short = (
        await as.mint({ subject: 'alice', ttlSeconds: 2, claims: { groups: ['dev'] } })
      ).access_token;
      const headers = await session(g1.mcpUrl, short);
      const subscribed = await rpc(g1.mcpUrl, 'resources/subscribe', { uri }, headers);
      expect(subscribed.json.result).toEqual({});
      expect(upstreamHolds(uri)).toBe(true);
      // another URI, the same session, a fresh token: its subscription is its own, and does
      // not make the first one last as long as it does
      const fresh = { ...headers, authorization: `Bearer ${tokenA}` };
      expect(
        (await rpc(g1.mcpUrl, 'resources/subscribe', { uri: later }, fresh)).json.result,
      ).toEqual({});
      const unsubscribes = repo.requestsFor('resources/unsubscribe').length;
      await new Promise((r) => setTimeout(r, 3000));
      // the same session, a fresh token of the same caller, no new subscribe
      const get = await SseReader.open(g1.mcpUrl, 'GET', {
        accept: 'text/event-stream',
        'mcp-protocol-version': headers['mcp-protocol-version']!,
        'mcp-session-id': headers['mcp-session-id']!,
        authorization: `Bearer ${tokenA}`,
      });
      try {
        expect(get.status).toBe(200);
        // the later subscription is served on the stream
        await repo.notifyResourceUpdated(later);
        await get.waitForMessage(
          (m) =>
            m.method === 'notifications/resources/updated' &&
            (m.params as { uri?: unknown } | undefined)?.uri === later,
          10_000,
        );
        await repo.notifyResourceUpdated(uri);
        // told at the update, not at the next minute's sweep
        await waitFor(() => !upstreamHolds(uri), 10_000);
        expect(repo.requestsFor('resources/unsubscribe').length).toBe(unsubscribes + 1);
        // keep-alive comments written after the update: the stream had its chance to carry it
        const comments = get.comments.length;
        await waitFor(() => get.comments.length >= comments + 2, 10_000);
        expect(updatesOf(get, uri)).toBe(0);
        expect(
          (await rpc(g1.mcpUrl, 'resources/unsubscribe', { uri: later }, fresh)).json.result,
        ).toEqual({});
      } finally {
        get.close();
      }
    });
  });

  describe('answers to relayed and bridged requests are bound to the caller, its grant and the gateway', () => {
    it('B answering A’s relayed elicitation/create with A’s relay id: 403 on both replicas (and for A’s sub with another grant), never delivered; A’s own answer completes the call', async () => {
      const headersA = await session(g1.mcpUrl, tokenA);
      const headersB = await session(g1.mcpUrl, tokenB);
      const seen = repo.seen.elicitations.length;
      const call = await streamedCall(g1.mcpUrl, headersA, 'repo__confirm', {
        question: 'Deploy?',
      });
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
      expect(String(asked.id)).toMatch(/^gw-relay\./);
      const fromB = { action: 'accept', content: { approve: true, note: 'from B' } };
      for (const gateway of [g1, g2]) {
        const refused = await answer(gateway.mcpUrl, headersB, asked.id, fromB);
        expect(refused.status).toBe(403);
        expect(refused.json).toMatchObject({ id: null, error: { code: -32600 } });
      }
      // A's own sub, but another grant: refused too
      const headersA2 = await session(g1.mcpUrl, tokenA2);
      expect((await answer(g1.mcpUrl, headersA2, asked.id, fromB)).status).toBe(403);
      expect(repo.seen.elicitations.length).toBe(seen);
      // A's answer reaches the upstream from the other replica too
      const fromA = { action: 'accept', content: { approve: false, note: 'from A' } };
      expect((await answer(g2.mcpUrl, headersA, asked.id, fromA)).status).toBe(202);
      const result = await call.waitForMessage((m) => m.id === 7, 20_000);
      expect(JSON.parse(resultText(result))).toEqual(fromA);
      expect(repo.seen.elicitations.slice(seen)).toEqual([fromA]);
    });

    it('a relay id from another gateway identity with the same keys: 400 there, never delivered', async () => {
      const headersA = await session(g1.mcpUrl, tokenA);
      const seen = repo.seen.elicitations.length;
      const call = await streamedCall(g1.mcpUrl, headersA, 'repo__confirm', { question: 'Ship?' });
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
      const onOther = await session(other.mcpUrl, tokenA);
      const foreign = await answer(other.mcpUrl, onOther, asked.id, {
        action: 'accept',
        content: { approve: true, note: 'via the other gateway' },
      });
      expect(foreign.status).toBe(400);
      expect(foreign.json).toMatchObject({ id: null, error: { code: -32600 } });
      expect(repo.seen.elicitations.length).toBe(seen);
      const own = { action: 'decline' };
      expect((await answer(g1.mcpUrl, headersA, asked.id, own)).status).toBe(202);
      const result = await call.waitForMessage((m) => m.id === 7, 20_000);
      expect(JSON.parse(resultText(result))).toEqual(own);
    });

    it('a relay id expires after session.pendingInputMillis: a late answer is 400 and never delivered', async () => {
      const headersA = await session(other.mcpUrl, tokenA);
      const seen = repo.seen.elicitations.length;
      const call = await streamedCall(other.mcpUrl, headersA, 'repo__confirm', {
        question: 'Late?',
      });
      try {
        const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
        const issuedAt = Date.now();
        // pendingInputMillis is 1000 on this gateway: wait until the id has surely expired
        await waitFor(() => Date.now() - issuedAt > 1_500, 5_000);
        const late = await answer(other.mcpUrl, headersA, asked.id, { action: 'decline' });
        expect(late.status).toBe(400);
        expect(late.json.error.message).toMatch(/expired/);
        expect(repo.seen.elicitations.length).toBe(seen);
      } finally {
        call.close();
      }
    });

    it('2025 client, 2026 upstream: B answering A’s bridged elicitation is 403 and never reaches the waiting call; A’s answer does', async () => {
      const headersA = await session(g1.mcpUrl, tokenA);
      const headersB = await session(g1.mcpUrl, tokenB);
      const call = await streamedCall(g1.mcpUrl, headersA, 'mr__confirm_deploy', { env: 'prod' });
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
      expect(asked.params.message).toBe('Deploy to prod?');
      for (const gateway of [g1, g2]) {
        const refused = await answer(gateway.mcpUrl, headersB, asked.id, {
          action: 'accept',
          content: { confirm: false },
        });
        expect(refused.status).toBe(403);
      }
      // another identity's gateway does not open it at all
      const onOther = await session(other.mcpUrl, tokenA);
      expect((await answer(other.mcpUrl, onOther, asked.id, { action: 'decline' })).status).toBe(
        400,
      );
      expect(
        (
          await answer(g1.mcpUrl, headersA, asked.id, {
            action: 'accept',
            content: { confirm: true },
          })
        ).status,
      ).toBe(202);
      const result = await call.waitForMessage((m) => m.id === 7, 20_000);
      expect(resultText(result)).toBe('deployed to prod (state=opaque-state-prod)');
      expect(mr.calls().at(-1).params.inputResponses).toEqual({
        confirm: { action: 'accept', content: { confirm: true } },
      });
    });
  });
});
