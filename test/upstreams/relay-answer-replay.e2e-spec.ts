import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const RESOURCE = 'https://gateway.test/mcp';

/**
 * A relay id is answered once. docs/security.md / answer-binding.ts: an answer "no call waits
 * for (it ended, or this request was answered already)" is 400 and "was not delivered". Here the
 * caller's answer is accepted and posted to the upstream a second (and third) time after it was
 * delivered and after the call completed: each replay is a POST to the upstream carrying the
 * caller's answer and credential, uncounted by rate limits (responses are not requests).
 */
describe('attack: a relayed request answered twice', () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let g: GatewayProcess;
  let token: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    repo = await V1Upstream.start();
    g = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('repo', repo.url)],
          shutdown: { gracePeriodSeconds: 2 },
        }),
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
        rateLimits: { perSubject: { capacity: 1000, refillPerSecond: 1 } },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await g.waitForListening(90_000);
    await g.waitForReady(90_000);
    token = (await as.mint({ subject: 'alice' })).access_token;
    await waitFor(async () => {
      const t = await rpc(g.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${token}` });
      return (t.json?.result?.tools ?? []).some((x: any) => x.name === 'repo__confirm');
    }, 30_000);
  }, 120_000);

  afterAll(async () => {
    await g?.stop();
    await Promise.all([as?.stop(), repo?.stop()]);
  });

  it('the second answer to one relay id is refused (400) and never reaches the upstream', async () => {
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
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      authorization: `Bearer ${token}`,
    };
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
    const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: asked.id,
      result: { action: 'accept', content: { approve: true } },
    });
    const responsesAtUpstream = () =>
      repo.requests.filter(
        (r) =>
          r.httpMethod === 'POST' &&
          r.rpcMethod === undefined &&
          (r.body as any)?.result?.action === 'accept',
      ).length;

    const first = await postRaw(g.mcpUrl, body, headers);
    expect(first.status).toBe(202);
    const result = await call.waitForMessage((m) => m.id === 7, 15_000);
    expect(result.result.structuredContent).toEqual({
      action: 'accept',
      content: { approve: true },
    });
    call.close();
    await waitFor(() => responsesAtUpstream() === 1, 5_000);

    // the same answer again, after it was delivered and the call completed
    const second = await postRaw(g.mcpUrl, body, headers);
    const third = await postRaw(g.mcpUrl, body, headers);
    await new Promise((r) => setTimeout(r, 1000));
    expect({
      second: second.status,
      third: third.status,
      upstreamGot: responsesAtUpstream(),
    }).toEqual({
      second: 400,
      third: 400,
      upstreamGot: 1,
    });
  }, 60_000);
});
