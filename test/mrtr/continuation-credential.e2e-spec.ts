import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { V2MrtrUpstream } from './mrtr-upstreams';
import { TestAuthorizationServer } from '../support/oidc-provider';
import { modernRequest } from '../support/modern-rpc';
import { SseReader } from '../support/sse-reader';
import { postRaw, rpc } from '../support/rpc';

const RESOURCE = 'https://gateway.test/mcp';
const CAPS = { elicitation: { form: {} } };

/**
 * docs/security.md "Answers to relayed requests": what a call sends upstream after the client
 * answered its questions — a parked call's answer (2026 client, 2025 upstream) or a bridged
 * call's retry round (2025 client, 2026 upstream) — goes with the answering request's
 * credential, never the first request's once that expired (`passthrough` upstreams, so the
 * token itself is what the upstream sees). The first token lives 3 s; the answer comes with a
 * second token of the same subject after it expired.
 */
describe("a call's continuation after the client's answer goes with the answering token", () => {
  let as: TestAuthorizationServer;
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  let g: GatewayProcess;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    [repo, mr] = await Promise.all([V1Upstream.start(), V2MrtrUpstream.start()]);
    const passthrough = {
      authorization: { mode: 'passthrough' },
      timeouts: { callMillis: 30_000 },
    } as const;
    g = GatewayProcess.spawn({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('repo', repo.url, passthrough), upstream('mr', mr.url, passthrough)],
          shutdown: { gracePeriodSeconds: 3 },
        }),
        http: { modernEra: true },
        auth: {
          mode: 'jwt',
          issuer: as.issuer,
          audience: RESOURCE,
          jwksUrl: as.jwksUrl,
          algorithms: ['ES256'],
        },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await g.waitForListening(90_000);
    await g.waitForReady(90_000);
  }, 120_000);

  afterAll(async () => {
    await g?.stop();
    await Promise.all([as?.stop(), repo?.stop(), mr?.stop()]);
  });

  it("a parked call's answer reaches the 2025 upstream with the 2026 retry's token, not the expired first one", async () => {
    const t1 = (await as.mint({ subject: 'alice', ttlSeconds: 3 })).access_token;
    const t2 = (await as.mint({ subject: 'alice' })).access_token;
    const args = { question: 'Ship it?' };
    const first = await modernRequest(
      g.mcpUrl,
      'tools/call',
      { name: 'repo__confirm', arguments: args },
      CAPS,
      t1,
    );
    const result = first.json.result;
    expect(result.resultType).toBe('input_required');
    const [key] = Object.keys(result.inputRequests);
    // T1 expires
    await new Promise((r) => setTimeout(r, 4500));
    const mark = repo.requests.length;
    const retry = await modernRequest(
      g.mcpUrl,
      'tools/call',
      {
        name: 'repo__confirm',
        arguments: args,
        requestState: result.requestState,
        inputResponses: { [key!]: { action: 'accept', content: { approve: true } } },
      },
      CAPS,
      t2,
    );
    const answers = repo.requests
      .slice(mark)
      .filter((r) => r.httpMethod === 'POST' && r.rpcMethod === undefined);
    expect(answers.length).toBeGreaterThan(0);
    const sent = answers.map((r) => r.headers.authorization);
    // right: the answering request's own credential
    expect(sent).toEqual(answers.map(() => `Bearer ${t2}`));
    expect(sent).not.toContain(`Bearer ${t1}`);
    expect(retry.json.result?.resultType).toBe('complete');
  });

  it("a bridged call's retry round reaches the 2026 upstream with the 2025 client's answering token", async () => {
    const t1 = (await as.mint({ subject: 'alice', ttlSeconds: 3 })).access_token;
    const t2 = (await as.mint({ subject: 'alice' })).access_token;
    const init = await rpc(
      g.mcpUrl,
      'initialize',
      {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: 'raw', version: '1' },
      },
      { authorization: `Bearer ${t1}` },
    );
    const sid = init.headers.get('mcp-session-id')!;
    const h = (token: string) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': sid,
      authorization: `Bearer ${token}`,
    });
    const call = await SseReader.open(
      g.mcpUrl,
      'POST',
      h(t1),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'mr__confirm_deploy', arguments: { env: 'prod' } },
      }),
    );
    try {
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create');
      await new Promise((r) => setTimeout(r, 4500));
      const mark = mr.bodies.length;
      const answered = await postRaw(
        g.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: asked.id,
          result: { action: 'accept', content: { confirm: true } },
        }),
        h(t2),
      );
      expect(answered.status).toBe(202);
      await call.waitForMessage((m) => m.id === 7, 20_000);
      const retries = mr.bodies
        .map((b, i) => ({ b, auth: mr.authorizations[i] }))
        .slice(mark)
        .filter(({ b }) => b?.method === 'tools/call');
      expect(retries).toHaveLength(1);
      // right: the answering request's token, not the expired T1
      expect(retries[0]!.auth).toBe(`Bearer ${t2}`);
    } finally {
      call.close();
    }
  });

  it('a 2025 call cancelled with a fresh token after the first expired: nothing upstream carries the expired one', async () => {
    const t1 = (await as.mint({ subject: 'alice', ttlSeconds: 3 })).access_token;
    const t2 = (await as.mint({ subject: 'alice' })).access_token;
    const init = await rpc(
      g.mcpUrl,
      'initialize',
      {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: 'raw', version: '1' },
      },
      { authorization: `Bearer ${t1}` },
    );
    const sid = init.headers.get('mcp-session-id')!;
    const h = (token: string) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': sid,
      authorization: `Bearer ${token}`,
    });
    await postRaw(
      g.mcpUrl,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      h(t1),
    );
    const call = await SseReader.open(
      g.mcpUrl,
      'POST',
      h(t1),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'repo__confirm', arguments: { question: 'Ship it?' } },
      }),
    );
    try {
      await call.waitForMessage((m) => m.method === 'elicitation/create');
      // T1 expires while the call waits for the client's answer
      await new Promise((r) => setTimeout(r, 4500));
      const mark = repo.requests.length;
      const cancelled = await postRaw(
        g.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 7, reason: 'user gave up' },
        }),
        h(t2),
      );
      expect(cancelled.status).toBe(202);
      await new Promise((r) => setTimeout(r, 2000));
      const after = repo.requests.slice(mark);
      const sent = after.map((r) => ({
        m: r.rpcMethod ?? (r.httpMethod === 'POST' ? 'response' : r.httpMethod),
        auth: r.headers.authorization,
      }));
      // the upstream is still told the call was cancelled, and the expired T1 reaches it in nothing
      expect(sent.map((s) => s.m)).toContain('notifications/cancelled');
      expect(sent.filter((s) => s.auth === `Bearer ${t1}`)).toEqual([]);
    } finally {
      call.close();
    }
  });
});
