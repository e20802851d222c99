import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';

const RESOURCE = 'https://gateway.test/mcp';
const URI = 'repo://readme';

/** A 2025 session's headers for `token` (initialize on /mcp). */
async function session(url: string, token: string): Promise<Record<string, string>> {
  const init = await rpc(
    url,
    'initialize',
    {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    },
    { authorization: `Bearer ${token}` },
  );
  const id = init.headers.get('mcp-session-id');
  if (id === null) throw new Error(`initialize issued no session id: ${init.text}`);
  return { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': id };
}

/**
 * A subscription outlives the grant it was made under: the caller's later token (same `sub`,
 * so the same session) may be granted less. What the gateway then sends for it — the
 * `resources/unsubscribe` that ends it — must not carry that token to an upstream outside the
 * token's grant (docs/security.md "Listen filters and list changes": no request, and with
 * `passthrough` none of the caller's credentials, reaches an upstream outside the grant). The
 * subscription still ends, and the upstream is told so with the gateway's own credential, as
 * when a subscription ends with its token's expiry (docs/operations.md §10 "Resource
 * subscriptions").
 */
describe('resources/unsubscribe with a token whose grant no longer has the subscribed upstream', () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let pub: ListenUpstream;
  let gateway: GatewayProcess;
  let wide: string;
  let narrow: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    [repo, pub] = await Promise.all([
      V1Upstream.start({}, { subscribable: true }),
      ListenUpstream.start(['echo'], ['pub://r1']),
    ]);
    gateway = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('repo', repo.url, { authorization: { mode: 'passthrough' } }),
            upstream('pub', pub.url),
          ],
          shutdown: { gracePeriodSeconds: 3 },
        }),
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, sources: ['repo', 'pub'] },
            { match: { claim: 'groups', value: 'ops' }, sources: ['pub'] },
          ],
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await gateway.waitForListening(90_000);
    await gateway.waitForReady(90_000);
    wide = (await as.mint({ subject: 'alice', claims: { groups: ['dev'] } })).access_token;
    narrow = (await as.mint({ subject: 'alice', claims: { groups: ['ops'] } })).access_token;
    await waitFor(async () => {
      const list = await rpc(
        gateway.mcpUrl,
        'resources/list',
        {},
        { authorization: `Bearer ${wide}` },
      );
      return (list.json?.result?.resources ?? []).some((r: { uri: string }) => r.uri === URI);
    }, 30_000);
  }, 200_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), repo?.stop(), pub?.stop()]);
  });

  it("the unsubscribe never reaches repo with the narrower token; the subscription ends and repo is told so with the gateway's own credential", async () => {
    const headers = await session(gateway.mcpUrl, wide);
    const subscribed = await rpc(
      gateway.mcpUrl,
      'resources/subscribe',
      { uri: URI },
      { ...headers, authorization: `Bearer ${wide}` },
    );
    expect(subscribed.json).toMatchObject({ result: {} });
    // the granted subscribe carried the caller's token (passthrough)
    expect(repo.requestsFor('resources/subscribe').map((r) => r.headers.authorization)).toEqual([
      `Bearer ${wide}`,
    ]);

    const ended = await rpc(
      gateway.mcpUrl,
      'resources/unsubscribe',
      { uri: URI },
      { ...headers, authorization: `Bearer ${narrow}` },
    );
    expect(ended.status).toBe(200);
    expect(ended.json).toMatchObject({ result: {} });
    // the gateway's own unsubscribe (no caller credential) may go after the answer
    await waitFor(() => repo.requestsFor('resources/unsubscribe').length === 1, 10_000);
    expect(repo.requestsFor('resources/unsubscribe')[0]?.headers.authorization).toBeUndefined();
    expect(repo.requests.map((r) => r.headers.authorization)).not.toContain(`Bearer ${narrow}`);

    // the gateway's session with repo holds the URI no more
    expect([...repo.subscriptions.values()].some((uris) => uris.has(URI))).toBe(false);
  });
});
