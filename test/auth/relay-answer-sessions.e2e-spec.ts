import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';

/**
 * docs/security.md "Sessions and notification streams": a 2025 session id is bound to its
 * caller, and a POST on it that does not open for the caller is 404 like an unknown session
 * (MCP 2025-11-25 Streamable HTTP "Session Management"), whatever the POST carries: a request,
 * a notification, or a JSON-RPC response (the caller's answer to a relayed elicitation), which
 * then goes nowhere (legacy.codec.ts); an answer on the caller's own other session, or on none,
 * is refused too (answer-binding.ts). On both /mcp listeners.
 */
describe.each(['fastify', 'node'])(
  'an answer to a relayed request on a session (MCP_HTTP_SERVER=%s)',
  (listener) => {
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
        env: { MCP_HTTP_SERVER: listener, MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        waitReady: true,
      });
      alice = (await as.mint({ subject: 'alice' })).access_token;
      bob = (await as.mint({ subject: 'bob' })).access_token;
      await waitFor(async () => {
        const t = await rpc(g.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${alice}` });
        return (t.json?.result?.tools ?? []).some(
          (x: { name: string }) => x.name === 'repo__confirm',
        );
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

    /**
     * Alice's call asks her (elicitation/create); `misdirected` is POSTed as her answer with
     * the headers it makes of hers. Then her own answer, on her own session, completes the
     * call: the one that was refused took nothing.
     */
    async function answeredWith(
      misdirected: (
        headers: Record<string, string>,
      ) => Record<string, string> | Promise<Record<string, string>>,
      batch = false,
    ): Promise<{ status: number; code: unknown; reachedUpstream: boolean }> {
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
        const answer = (approve: boolean) => ({
          jsonrpc: '2.0',
          id: asked.id,
          result: { action: 'accept', content: { approve } },
        });
        const before = repo.requests.length;
        const refused = await postRaw(
          g.mcpUrl,
          JSON.stringify(batch ? [answer(false)] : answer(false)),
          await misdirected(headers),
        );
        await new Promise((r) => setTimeout(r, 500));
        const reachedUpstream = repo.requests
          .slice(before)
          .some((r) => r.httpMethod === 'POST' && r.rpcMethod === undefined);
        if (refused.status !== 202) {
          const own = await postRaw(g.mcpUrl, JSON.stringify(answer(true)), headers);
          expect(own.status).toBe(202);
          const result = await call.waitForMessage((m) => m.id === 7, 15_000);
          expect(result.result.structuredContent).toEqual({
            action: 'accept',
            content: { approve: true },
          });
        }
        return { status: refused.status, code: refused.json?.error?.code, reachedUpstream };
      } finally {
        call.close();
      }
    }

    it.each([
      [
        "another caller's (bob's) session id",
        async (own: Record<string, string>) => ({
          ...own,
          'mcp-session-id': (await sessionHeaders(bob))['mcp-session-id']!,
        }),
      ],
      [
        'a session id that opens for nobody',
        (own: Record<string, string>) => ({
          ...own,
          'mcp-session-id': 'not-a-session-of-this-gateway',
        }),
      ],
    ])(
      'with %s: 404, and the upstream gets nothing',
      async (_what, misdirected) => {
        expect(await answeredWith(misdirected)).toEqual({
          status: 404,
          code: -32001,
          reachedUpstream: false,
        });
      },
      60_000,
    );

    it('in a batch (on her own session): 400 -32600 (batches are not taken), and the upstream gets nothing', async () => {
      expect(await answeredWith((own) => own, true)).toEqual({
        status: 400,
        code: -32600,
        reachedUpstream: false,
      });
    }, 60_000);

    // the relay id is bound to the session it was put on (docs/security.md "Answers to relayed
    // requests"): alice's token is not enough, as the SDK servers route an answer by session
    it.each([
      [
        'her own other session',
        async (own: Record<string, string>) => ({
          ...own,
          'mcp-session-id': (await sessionHeaders(alice))['mcp-session-id']!,
        }),
      ],
      ['no session id', ({ 'mcp-session-id': _dropped, ...rest }: Record<string, string>) => rest],
    ])(
      'with %s: 403 -32600 (put to another session), and the upstream gets nothing',
      async (_what, misdirected) => {
        expect(await answeredWith(misdirected)).toEqual({
          status: 403,
          code: -32600,
          reachedUpstream: false,
        });
      },
      60_000,
    );
  },
);
