import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

/**
 * docs/security.md "Answers to relayed requests" and upstream-router.ts: "one answer per
 * request: a repeat of it (a client retrying, a replay) is refused as one whose call has ended,
 * here and on every replica, never posted to the upstream again". Across replicas the check is
 * a Redis GET and the mark a later, unawaited SET: the same answer sent to two replicas at
 * once passes both checks and is posted to the upstream twice (both answered 202).
 */
describe('attack: one relayed request answered on two replicas at once', () => {
  let repo: V1Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    repo = await V1Upstream.start();
    const mcp = {
      ...gatewayConfig([], {
        upstreams: [upstream('repo', repo.url, { timeouts: { callMillis: 30_000 } })],
        redis: { keyPrefix: uniqueKeyPrefix() },
        shutdown: { gracePeriodSeconds: 2 },
      }),
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
    [a, b] = await Promise.all([
      GatewayProcess.startPatiently({ mcp, env }),
      GatewayProcess.startPatiently({ mcp, env }),
    ]);
    for (const g of [a, b])
      await waitFor(async () => {
        const t = await rpc(g.mcpUrl, 'tools/list', {});
        return (t.json?.result?.tools ?? []).some((x: any) => x.name === 'repo__confirm');
      }, 30_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await repo?.stop();
  });

  it('is delivered once: one 202, the others 400, one response at the upstream', async () => {
    const outcomes: { statuses: number[]; upstreamGot: number }[] = [];
    for (let round = 0; round < 8; round++) {
      const init = await rpc(a.mcpUrl, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: 'raw', version: '1' },
      });
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': init.headers.get('mcp-session-id')!,
      };
      const question = `round ${round}?`;
      const call = await SseReader.open(
        a.mcpUrl,
        'POST',
        headers,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'repo__confirm', arguments: { question } },
        }),
      );
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: asked.id,
        result: { action: 'accept', content: { approve: true } },
      });
      const before = repo.requests.length;
      const responsesAtUpstream = () =>
        repo.requests
          .slice(before)
          .filter(
            (r) =>
              r.httpMethod === 'POST' &&
              r.rpcMethod === undefined &&
              (r.body as any)?.result?.action === 'accept',
          ).length;
      const answers = await Promise.all([
        postRaw(a.mcpUrl, body, headers),
        postRaw(b.mcpUrl, body, headers),
        postRaw(b.mcpUrl, body, headers),
        postRaw(a.mcpUrl, body, headers),
      ]);
      await call.waitForMessage((m) => m.id === 7, 15_000);
      call.close();
      await new Promise((r) => setTimeout(r, 1000));
      outcomes.push({
        statuses: answers.map((x) => x.status).sort(),
        upstreamGot: responsesAtUpstream(),
      });
    }
    expect(outcomes).toEqual(
      Array.from({ length: 8 }, () => ({ statuses: [202, 400, 400, 400], upstreamGot: 1 })),
    );
  }, 90_000);
});
