import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/security.md "Sessions and notification streams": a 2025 session id is bound to its
 * caller — "a request on it (POST, GET) carries a valid token of the same caller … or it is 404
 * like an unknown session"; a notification on a session that does not open for the caller is
 * 404 (legacy.codec.ts). A POST whose body is a JSON-RPC *response* (a client's answer to a
 * relayed elicitation) skips the session check: sent with another caller's session id, or a
 * session id that opens for nobody, it is taken (202) and posted to the upstream.
 */
describe("attack: an answer to a relayed request on a session that is not the caller's", () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let g: GatewayProcess;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    repo = await V1Upstream.start();
    g = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('repo', repo.url, { timeouts: { callMillis: 30_000 } })],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
      waitReady: true,
    });
    alice = (await as.mint({ subject: 'alice' })).access_token;
    bob = (await as.mint({ subject: 'bob' })).access_token;
    await waitFor(async () => {
      const t = await rpc(g.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${alice}` });
      return (t.json?.result?.tools ?? []).some((x: any) => x.name === 'repo__confirm');
    }, 30_000);
  }, 120_000);

  afterAll(async () => {
    await g?.stop();
    await Promise.all([as?.stop(), repo?.stop()]);
  });

  async function sessionHeaders(token: string): Promise<Record<string, string>> {
    const init = await rpc(
      g.mcpUrl,
      'initialize',
      {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: 'raw', version: '1' },
      },
      { authorization: `Bearer ${token}` },
    );
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      authorization: `Bearer ${token}`,
    };
  }

  it.each([
    [
      "another caller's (bob's) session id",
      async (): Promise<string> => (await sessionHeaders(bob))['mcp-session-id']!,
    ],
    [
      'a session id that opens for nobody',
      async (): Promise<string> => 'not-a-session-of-this-gateway',
    ],
  ])(
    'with %s: 404, and the upstream gets nothing',
    async (_what, foreignSession) => {
      const headers = await sessionHeaders(alice);
      const call = await SseReader.open(
        g.mcpUrl,
        'POST',
        headers,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'repo__confirm', arguments: { question: 'ok?' } },
        }),
      );
      try {
        const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
        const before = repo.requests.length;
        const answered = await postRaw(
          g.mcpUrl,
          JSON.stringify({
            jsonrpc: '2.0',
            id: asked.id,
            result: { action: 'accept', content: { approve: true } },
          }),
          { ...headers, 'mcp-session-id': await foreignSession() },
        );
        await new Promise((r) => setTimeout(r, 500));
        const reachedUpstream = repo.requests
          .slice(before)
          .some((r) => r.httpMethod === 'POST' && r.rpcMethod === undefined);
        expect({ status: answered.status, reachedUpstream }).toEqual({
          status: 404,
          reachedUpstream: false,
        });
      } finally {
        call.close();
      }
    },
    60_000,
  );
});
