import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { postRaw } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';

/**
 * A request an upstream relayed to a 2025 client, answered on another replica after its call
 * ended (docs/operations.md §10 "Relaying"): the upstream was answered -32603 for it when the
 * call ended, so the late answer goes nowhere; the other replica says so (400), as the one that
 * relayed it does, instead of taking it (202).
 */
describe('a late answer to a relayed request, on the other replica', () => {
  let repo: V1Upstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    repo = await V1Upstream.start();
    const mcp = gatewayConfig([], {
      upstreams: [upstream('repo', repo.url)],
      redis: { keyPrefix: uniqueKeyPrefix() },
    });
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
    [a, b] = await Promise.all([
      GatewayProcess.startPatiently({ mcp, env }),
      GatewayProcess.startPatiently({ mcp, env }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await repo?.stop();
  });

  it('is 400 (no call waits for it) and never reaches the upstream', async () => {
    const seenBefore = repo.seen.elicitations.length;
    const requestsBefore = repo.requests.length;
    const toldEnded = (): boolean =>
      repo.requests.slice(requestsBefore).some((r) => {
        const error = (r.body as { error?: { message?: unknown } } | undefined)?.error;
        return (
          r.rpcMethod === undefined &&
          typeof error?.message === 'string' &&
          error.message.includes('ended (cancelled, timed out or answered) before its client')
        );
      });
    const client = await connectV1(a.mcpUrl, {}, { elicitation: { form: {} } });
    let relayId: string | number | undefined;
    let sessionId: string | undefined;
    try {
      const asked = new Promise<void>((resolveAsked) => {
        client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
          relayId = extra.requestId;
          resolveAsked();
          return new Promise(() => undefined);
        });
      });
      sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId;
      const abort = new AbortController();
      const call = client
        .callTool({ name: 'repo__confirm', arguments: { question: 'Later?' } }, undefined, {
          signal: abort.signal,
        })
        .catch(() => 'aborted');
      await asked;
      abort.abort();
      expect(await call).toBe('aborted');
      await waitFor(toldEnded, 10_000);
    } finally {
      await client.close();
    }
    const answer = JSON.stringify({
      jsonrpc: '2.0',
      id: relayId,
      result: { action: 'accept', content: { approve: true } },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    };
    const late = await postRaw(b.mcpUrl, answer, headers);
    expect([late.status, late.json?.error?.code]).toEqual([400, -32600]);
    expect(late.json.error.message).toContain('no call waits for this answer any more');
    const requestsAfter = repo.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(repo.requests.length).toBe(requestsAfter);
    expect(repo.seen.elicitations.length).toBe(seenBefore);
  }, 60_000);
});
