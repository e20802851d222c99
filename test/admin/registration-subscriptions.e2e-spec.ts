import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { stopAfterEach } from '../support/cleanup';
import { TEST_SESSION_KEYS, waitFor, type GatewayProcess } from '../support/gateway-process';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { ADMIN_TOKEN, admin, startGateway, waitForState } from './admin-support';

const UPDATED = 'notifications/resources/updated';

/**
 * A 2025 session's resource subscriptions when the runtime registration that serves the URI is
 * deleted and posted again under its id for another server (docs/operations.md §15 "Deleted
 * means gone", §10 "Resource subscriptions"): the registration now applied is another upstream,
 * so the subscription follows it as it follows a new owner of the URI. The listen the gateway
 * held on the first (2026) server for a bridged subscription ends (it stayed open, carrying the
 * caller's headers, and what the deleted server sent still reached the session), and a
 * subscription on a 2025 server is ended on the new one by the client's unsubscribe (it stayed
 * bound to the deleted registration, so the new server kept it for good).
 */
describe('resource subscriptions of a registration deleted and registered again', () => {
  const track = stopAfterEach();
  let first: ListenUpstream;
  let second: ListenUpstream;
  let calc: V2Upstream;
  let other: ScriptedUpstream;
  let stream: SseReader | undefined;

  beforeAll(async () => {
    [first, second, calc] = await Promise.all([
      ListenUpstream.start(),
      ListenUpstream.start(),
      V2Upstream.start(),
    ]);
    // a second configured upstream serving resources: with the registration gone, no URI of
    // its falls to the only upstream serving resources (CatalogExtras.resourceOwner), so what
    // is tested is the registration replaced under its id, not an owner change
    other = await ScriptedUpstream.start({
      tools: [upTool('t')],
      resources: [{ uri: 'other://x', name: 'x' }],
      capabilities: { tools: {}, resources: { subscribe: true } },
      sessionId: 'other-session',
    });
  });
  afterAll(async () => {
    stream?.close();
    await Promise.all([first?.stop(), second?.stop(), calc?.stop(), other?.stop()]);
  });

  /** A gateway with one configured upstream (calc), the registration API and sessions. */
  function gateway(): Promise<GatewayProcess> {
    return startGateway(
      {
        mcp: {
          ...gatewayConfig([], {
            upstreams: [upstream('calc', calc.url), upstream('other', other.url)],
            registry: { refreshIntervalSeconds: 1 },
          }),
          http: { modernEra: true },
          listen: { keepAliveMillis: 200 },
          admin: { allowLoopback: true },
        },
        env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        waitReady: true,
      },
      track,
    );
  }

  it("the listen on the first server ends, and its updates never reach the session's GET stream", async () => {
    const gw = await gateway();
    const register = async (url: string) => {
      expect((await admin(gw, 'POST', '/admin/upstreams', { id: 'dyn', url })).status).toBe(202);
      await waitForState(gw, 'dyn', 'ACTIVE');
    };
    await register(first.url);
    const session = await openLegacySession(gw.mcpUrl);
    // the URI is published (and the upstream's era known) once its lists are pulled
    await waitFor(async () => {
      const list = await rpc(gw.mcpUrl, 'resources/list', {}, session);
      return (list.json?.result?.resources ?? []).some(
        (r: { uri: string }) => r.uri === STATUS_URI,
      );
    }, 20_000);
    stream = await SseReader.open(gw.mcpUrl, 'GET', { ...session, accept: 'text/event-stream' });
    expect(stream.status).toBe(200);
    const sub = await rpc(gw.mcpUrl, 'resources/subscribe', { uri: STATUS_URI }, session);
    expect(sub.json?.result).toEqual({});
    await waitFor(
      () => first.openListens === 1,
      10_000,
      () => gw.output,
    );
    first.notifyResourceUpdated(STATUS_URI);
    await stream.waitForMessage((m) => m.method === UPDATED);

    expect((await admin(gw, 'DELETE', '/admin/upstreams/dyn')).status).toBe(200);
    await register(second.url);
    // the deleted registration's server holds no listen of the gateway any more
    await waitFor(
      () => first.openListens === 0,
      15_000,
      () => `the first server still holds ${first.openListens} listen(s)\n${gw.output}`,
    );
    const listensSeen = first.listensSeen.length;
    const told = stream.messages.filter((m) => m.method === UPDATED).length;
    first.notifyResourceUpdated(STATUS_URI);
    // keep-alive comments written after it: the update had its chance to be relayed
    const comments = stream.comments.length;
    await waitFor(() => stream!.comments.length >= comments + 5, 10_000);
    expect(stream.messages.filter((m) => m.method === UPDATED).length).toBe(told);
    expect(first.listensSeen.length).toBe(listensSeen);

    // subscribed again, the session's updates come from the server registered now
    const again = await rpc(gw.mcpUrl, 'resources/subscribe', { uri: STATUS_URI }, session);
    expect(again.json?.result).toEqual({});
    await waitFor(
      () => second.openListens === 1,
      10_000,
      () => `the second server holds ${second.openListens} listen(s)\n${gw.output}`,
    );
    second.notifyResourceUpdated(STATUS_URI);
    await waitFor(
      () => stream!.messages.filter((m) => m.method === UPDATED).length === told + 1,
      10_000,
    );
    expect(first.listensSeen.length).toBe(listensSeen);
  }, 120_000);

  it("2025 servers: the subscription follows the id's new registration (subscribed with the gateway's credential), and the client's unsubscribe reaches it, nothing the first one", async () => {
    const [a, b] = await Promise.all([
      V1Upstream.start({}, { subscribable: true }),
      V1Upstream.start({}, { subscribable: true }),
    ]);
    track(a);
    track(b);
    const gw = await gateway();
    const register = async (url: string) => {
      expect((await admin(gw, 'POST', '/admin/upstreams', { id: 'old', url })).status).toBe(202);
      await waitForState(gw, 'old', 'ACTIVE');
    };
    await register(a.url);
    const session = await openLegacySession(gw.mcpUrl);
    const subscribe = (method: string) => rpc(gw.mcpUrl, method, { uri: 'repo://readme' }, session);
    await waitFor(async () => (await subscribe('resources/subscribe')).json?.result !== undefined);
    expect(a.requestsFor('resources/subscribe')).toHaveLength(1);

    expect((await admin(gw, 'DELETE', '/admin/upstreams/old')).status).toBe(200);
    await register(b.url);
    // the next round binds it to the server registered now, as to a new owner of the URI
    await waitFor(
      () => b.requestsFor('resources/subscribe').length === 1,
      10_000,
      () => `the server registered now was never subscribed: ${gw.output}`,
    );
    expect(b.requestsFor('resources/subscribe')[0]?.headers.authorization).toBeUndefined();
    const sentToA = a.requests.length;

    const ended = await subscribe('resources/unsubscribe');
    expect(ended.json?.result).toEqual({});
    await waitFor(
      () => b.requestsFor('resources/unsubscribe').length === 1,
      10_000,
      () => `the server registered now was never told: ${gw.output}`,
    );
    expect([...b.subscriptions.values()].some((uris) => uris.has('repo://readme'))).toBe(false);
    expect(a.requests.length).toBe(sentToA);
  }, 120_000);

  it('deleted and not registered again: the listen held on its server for a bridged subscription ends, and the unsubscribe is answered without reaching it', async () => {
    const gone = await ListenUpstream.start();
    try {
      const gw = await gateway();
      expect(
        (await admin(gw, 'POST', '/admin/upstreams', { id: 'gone', url: gone.url })).status,
      ).toBe(202);
      await waitForState(gw, 'gone', 'ACTIVE');
      const session = await openLegacySession(gw.mcpUrl);
      await waitFor(async () => {
        const list = await rpc(gw.mcpUrl, 'resources/list', {}, session);
        return (list.json?.result?.resources ?? []).some(
          (r: { uri: string }) => r.uri === STATUS_URI,
        );
      }, 20_000);
      const sub = await rpc(gw.mcpUrl, 'resources/subscribe', { uri: STATUS_URI }, session);
      expect(sub.json?.result).toEqual({});
      await waitFor(
        () => gone.openListens === 1,
        10_000,
        () => gw.output,
      );

      expect((await admin(gw, 'DELETE', '/admin/upstreams/gone')).status).toBe(200);
      await waitFor(
        () => gone.openListens === 0,
        15_000,
        () => `the deleted server still holds ${gone.openListens} listen(s)\n${gw.output}`,
      );
      const seen = gone.listensSeen.length;
      const ended = await rpc(gw.mcpUrl, 'resources/unsubscribe', { uri: STATUS_URI }, session);
      expect(ended.json?.result).toEqual({});
      expect(gone.listensSeen.length).toBe(seen);
    } finally {
      await gone.stop();
    }
  }, 120_000);
});
