import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream, STATUS_URI } from '../support/listen-upstream';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';
const V = '2026-07-28';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * docs/security.md "Answers to relayed requests": what the gateway sends again on its own for a
 * caller's request is not sent once the caller's token has expired. A 2026 client's listen
 * stays open until its token's exp + clockSkewSeconds (30 s by default), and the upstream listen
 * held for it is re-opened by the gateway when the upstream drops it: never after the token's
 * exp (UpstreamListener.hold), so a passthrough upstream is never sent the expired token, and
 * the client's stream then ends as at its expiry (no closing result) for the client to listen
 * again with a fresh token.
 */
describe("an upstream listen is never re-opened with the caller's expired token", () => {
  let as: TestAuthorizationServer;
  let lu: ListenUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    lu = await ListenUpstream.start(['echo']);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('lu', lu.url, {
              protocol: '2026-07-28',
              authorization: { mode: 'passthrough' },
            }),
          ],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        http: { modernEra: true },
        listen: { keepAliveMillis: 300 },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
          clockSkewSeconds: 30,
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

  it('no request carrying the token reaches the upstream after its exp', async () => {
    const long = (await as.mint({ subject: 'alice', resource: RESOURCE })).access_token;
    await waitFor(async () => {
      const tools = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { authorization: `Bearer ${long}` },
      );
      return (tools.json?.result?.tools ?? []).some((t: { name: string }) => t.name === 'lu__echo');
    }, 30_000);
    const short = await as.mint({ subject: 'alice', resource: RESOURCE, ttlSeconds: 4 });
    const expMs = Date.now() + short.expires_in * 1000;
    const listening = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'subscriptions/listen',
        authorization: `Bearer ${short.access_token}`,
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'L1',
        method: 'subscriptions/listen',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          },
          notifications: { resourceSubscriptions: [STATUS_URI] },
        },
      }),
    );
    try {
      await listening.waitForMessage(() => true);
      await waitFor(() => lu.openListens === 1, 10_000);
      const carrying = () =>
        lu.authorizations.filter((a) => a === `Bearer ${short.access_token}`).length;
      expect(carrying()).toBeGreaterThan(0);
      await sleep(Math.max(0, expMs - Date.now()) + 1000);
      const atExpiry = carrying();
      expect(listening.ended).toBe(false);
      // the upstream drops its listen connections (a restart, a load balancer's idle cut)
      lu.dropConnections();
      // the client's stream ends as at its token's expiry: no closing result
      await listening.waitForEnd(10_000);
      expect(listening.messages.some((m) => m.id === 'L1')).toBe(false);
      await sleep(4000);
      expect({ sentAfterExp: carrying() - atExpiry }).toEqual({ sentAfterExp: 0 });
    } finally {
      listening.close();
    }
  }, 60_000);
});
