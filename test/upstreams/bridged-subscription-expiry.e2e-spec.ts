import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';
const URI_X = 'x26://bridged/x';
const URI_Y = 'x26://bridged/y';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * docs/security.md "Side paths bound to the caller": a 2025 resource subscription "ends with its
 * subscribing token's expiry (no update after it, on any stream of the session; each subscription
 * with its own token: a later subscribe of another URI with a fresh token does not make it last
 * longer)". Bridged to a 2026 upstream's `subscriptions/listen`, the session's one listen on that
 * upstream carries the latest subscribing credential for all its URIs: an update is delivered
 * only for a subscription still within its own token, and at that token's expiry the listen is
 * re-opened without the URI (ResourceSubscriptions.narrowLater), not at the once-a-minute sweep.
 */
describe('a bridged 2025 subscription ends with its own subscribing token', () => {
  let as: TestAuthorizationServer;
  let lu: ListenUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    lu = await ListenUpstream.start(['echo'], [URI_X, URI_Y]);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('lu', lu.url, {
              protocol: '2026-07-28',
              // the listen carries the caller's token: which one is seen upstream
              authorization: { mode: 'passthrough' },
            }),
          ],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        listen: { keepAliveMillis: 300 },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
          clockSkewSeconds: 0,
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), lu?.stop()]);
  });

  it('an update of URI X after the token X was subscribed with expired does not reach the session', async () => {
    const long = (await as.mint({ subject: 'alice', resource: RESOURCE, ttlSeconds: 600 }))
      .access_token;
    const short = await as.mint({ subject: 'alice', resource: RESOURCE, ttlSeconds: 5 });
    const shortExpMs = Date.now() + short.expires_in * 1000;
    await waitFor(async () => {
      const list = await rpc(
        gateway.mcpUrl,
        'resources/list',
        {},
        { authorization: `Bearer ${long}` },
      );
      return (list.json?.result?.resources ?? []).some((r: { uri: string }) => r.uri === URI_X);
    }, 30_000);
    const session = await openLegacySession(gateway.mcpUrl, {
      authorization: `Bearer ${long}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    });
    const get = await SseReader.open(gateway.mcpUrl, 'GET', {
      ...session,
      accept: 'text/event-stream',
    });
    expect(get.status).toBe(200);
    try {
      // X with the short-lived token, then Y (same upstream) with the long one
      const subX = await rpc(
        gateway.mcpUrl,
        'resources/subscribe',
        { uri: URI_X },
        {
          ...session,
          authorization: `Bearer ${short.access_token}`,
        },
      );
      expect(subX.json?.result).toEqual({});
      const subY = await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: URI_Y }, session);
      expect(subY.json?.result).toEqual({});
      await waitFor(() => lu.openListens === 1, 10_000);
      await sleep(500);
      // before the short token's exp, X's update is delivered
      lu.notifyResourceUpdated(URI_X);
      await get.waitForMessage(
        (m) => m.method === 'notifications/resources/updated' && m.params?.uri === URI_X,
      );
      // the short token expires
      await sleep(Math.max(0, shortExpMs - Date.now()) + 1500);
      const before = get.messages.length;
      lu.notifyResourceUpdated(URI_X);
      lu.notifyResourceUpdated(URI_Y);
      // Y's update (still valid) arrives: X's must not have arrived with it
      await get.waitForMessage(
        (m) => m.method === 'notifications/resources/updated' && m.params?.uri === URI_Y,
      );
      await sleep(500);
      const after = get.messages
        .slice(before)
        .filter((m) => m.method === 'notifications/resources/updated')
        .map((m) => m.params.uri);
      expect(after).toEqual([URI_Y]);
      // the upstream listen was narrowed to Y at X's expiry
      const last = lu.listensSeen.at(-1) as {
        params?: { notifications?: { resourceSubscriptions?: string[] } };
      };
      expect(last.params?.notifications?.resourceSubscriptions).toEqual([URI_Y]);
    } finally {
      get.close();
    }
  });

  it("X subscribed with a long token outlives Y's shorter later one: the listen goes on with X's token", async () => {
    const long = await as.mint({ subject: 'alice', resource: RESOURCE, ttlSeconds: 600 });
    const short = await as.mint({ subject: 'alice', resource: RESOURCE, ttlSeconds: 5 });
    const shortExpMs = Date.now() + short.expires_in * 1000;
    const longAuth = `Bearer ${long.access_token}`;
    const shortAuth = `Bearer ${short.access_token}`;
    const session = await openLegacySession(gateway.mcpUrl, {
      authorization: longAuth,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    });
    const get = await SseReader.open(gateway.mcpUrl, 'GET', {
      ...session,
      accept: 'text/event-stream',
    });
    expect(get.status).toBe(200);
    const updatesSince = (from: number): string[] =>
      get.messages
        .slice(from)
        .filter((m) => m.method === 'notifications/resources/updated')
        .map((m) => m.params.uri);
    // this session's listens: the only ones asking for X (the case above narrowed its own to Y)
    const firstListen = lu.listensSeen.length;
    const ours = (): { uris?: string[]; authorization?: string }[] =>
      lu.listensSeen
        .map((body, i) => ({
          uris: (body as { params?: { notifications?: { resourceSubscriptions?: string[] } } })
            .params?.notifications?.resourceSubscriptions,
          authorization: lu.listenAuthorizations[i],
        }))
        .slice(firstListen)
        .filter((listen) => listen.uris?.includes(URI_X) === true);
    try {
      // X with the long-lived token, then Y (same upstream) with the short one: the latest
      const subX = await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: URI_X }, session);
      expect(subX.json?.result).toEqual({});
      const subY = await rpc(
        gateway.mcpUrl,
        'resources/subscribe',
        { uri: URI_Y },
        { ...session, authorization: shortAuth },
      );
      expect(subY.json?.result).toEqual({});
      await sleep(Math.max(0, shortExpMs - Date.now()) + 1500);
      // Y's token expired: the listen was narrowed to X, and X's updates still arrive
      const atExp = ours().length;
      expect(ours().at(-1)?.uris).toEqual([URI_X]);
      const before = get.messages.length;
      lu.notifyResourceUpdated(URI_X);
      lu.notifyResourceUpdated(URI_Y);
      await waitFor(() => updatesSince(before).includes(URI_X), 10_000);
      // the upstream drops the listen: it is opened again for X alone, with X's token
      lu.dropConnections();
      await waitFor(() => ours().length > atExp, 15_000);
      await sleep(500);
      const again = get.messages.length;
      lu.notifyResourceUpdated(URI_X);
      lu.notifyResourceUpdated(URI_Y);
      await waitFor(() => updatesSince(again).includes(URI_X), 10_000);
      await sleep(500);
      expect(updatesSince(again)).toEqual([URI_X]);
      expect(ours().at(-1)?.uris).toEqual([URI_X]);
      // never with Y's token (the latest subscribe's, expired first), before or after its exp
      expect(ours().map((listen) => listen.authorization)).toEqual(ours().map(() => longAuth));
    } finally {
      get.close();
    }
  });
});
