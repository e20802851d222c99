import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';
import { SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { postRaw, rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { SseReader } from '../support/sse-reader';

/**
 * Answers to a request an upstream relayed to a 2025 client, on two replicas sharing Redis
 * (docs/operations.md §10 "Relaying"; docs/security.md "Answers to relayed requests"): one
 * answer per request reaches the upstream, whichever replica it is POSTed to and however many
 * times, at once or later.
 */
describe('answers to a relayed request, on two replicas', () => {
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    [repo, mr] = await Promise.all([V1Upstream.start(), V2MrtrUpstream.start()]);
    const calls = { timeouts: { callMillis: 30_000 } };
    const mcp = gatewayConfig([], {
      upstreams: [upstream('repo', repo.url, calls), upstream('mr', mr.url, calls)],
      redis: { keyPrefix: uniqueKeyPrefix() },
      shutdown: { gracePeriodSeconds: 2 },
    });
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
    [a, b] = await Promise.all([
      GatewayProcess.startPatiently({ mcp, env }),
      GatewayProcess.startPatiently({ mcp, env }),
    ]);
    for (const g of [a, b])
      await waitFor(async () => {
        const t = await rpc(g.mcpUrl, 'tools/list', {});
        const names = (t.json?.result?.tools ?? []).map((x: { name: string }) => x.name);
        return names.includes('repo__confirm') && names.includes('mr__confirm_deploy');
      }, 30_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([repo?.stop(), mr?.stop()]);
  });

  /** A raw 2025 session on `a` that declared elicitation: the headers of its POSTs. */
  async function session(): Promise<Record<string, string>> {
    const init = await rpc(a.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'raw', version: '1' },
    });
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': init.headers.get('mcp-session-id')!,
    };
  }

  /** A tools/call (id 7) on `a` whose SSE answer is read, until it asks elicitation/create. */
  async function asking(
    headers: Record<string, string>,
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ call: SseReader; askedId: string }> {
    const call = await SseReader.open(
      a.mcpUrl,
      'POST',
      headers,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    );
    const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
    return { call, askedId: asked.id };
  }

  /** The same body POSTed four times at once, twice to each replica: the statuses, sorted. */
  async function answerEverywhere(body: string, headers: Record<string, string>) {
    const answers = await Promise.all([
      postRaw(a.mcpUrl, body, headers),
      postRaw(b.mcpUrl, body, headers),
      postRaw(b.mcpUrl, body, headers),
      postRaw(a.mcpUrl, body, headers),
    ]);
    for (const refused of answers.filter((x) => x.status !== 202))
      expect(refused.json?.error?.code).toBe(-32600);
    return answers.map((x) => x.status).sort();
  }

  it('one answer POSTed to both replicas at the same moment (a relay id) is delivered once: one 202, the others 400, one response at the upstream', async () => {
    // each replica used to read Redis to see the answer was not taken and mark it later,
    // unawaited: both passed the read. Several rounds, as a race shows only sometimes.
    const outcomes: { statuses: number[]; upstreamGot: number }[] = [];
    for (let round = 0; round < 8; round++) {
      const headers = await session();
      const { call, askedId } = await asking(headers, 'repo__confirm', {
        question: `round ${round}?`,
      });
      const before = repo.requests.length;
      const statuses = await answerEverywhere(
        JSON.stringify({
          jsonrpc: '2.0',
          id: askedId,
          result: { action: 'accept', content: { approve: true } },
        }),
        headers,
      );
      await call.waitForMessage((m) => m.id === 7, 15_000);
      call.close();
      await new Promise((r) => setTimeout(r, 1000));
      const upstreamGot = repo.requests
        .slice(before)
        .filter(
          (r) =>
            r.httpMethod === 'POST' &&
            r.rpcMethod === undefined &&
            (r.body as { result?: { action?: unknown } } | undefined)?.result?.action === 'accept',
        ).length;
      outcomes.push({ statuses, upstreamGot });
    }
    expect(outcomes).toEqual(
      Array.from({ length: 8 }, () => ({ statuses: [202, 400, 400, 400], upstreamGot: 1 })),
    );
  }, 90_000);

  it('so is one answer to a bridged request (a 2026 upstream’s input_required), a result or an error: one 202, the others 400, one retry at the upstream', async () => {
    // every answer goes to the one replica that holds the call (InputHandoff.resume), which
    // takes it in one step (legacy-input-bridge.ts): no Redis read between check and mark
    const outcomes: { statuses: number[]; retries: number }[] = [];
    for (let round = 0; round < 4; round++) {
      const env = `bridged-${round}`;
      const headers = await session();
      const { call, askedId } = await asking(headers, 'mr__confirm_deploy', { env });
      // an error answer refuses the call at once: it too is taken once
      const answer =
        round % 2 === 0
          ? { result: { action: 'accept', content: { confirm: true } } }
          : { error: { code: -1, message: 'no' } };
      const statuses = await answerEverywhere(
        JSON.stringify({ jsonrpc: '2.0', id: askedId, ...answer }),
        headers,
      );
      await call.waitForMessage((m) => m.id === 7, 15_000);
      call.close();
      const retries = mr
        .calls()
        .filter(
          (c) =>
            c.params.name === 'confirm_deploy' &&
            c.params.arguments?.env === env &&
            c.params.inputResponses !== undefined,
        ).length;
      outcomes.push({ statuses, retries });
    }
    expect(outcomes).toEqual(
      Array.from({ length: 4 }, (_, round) => ({
        statuses: [202, 400, 400, 400],
        retries: round % 2 === 0 ? 1 : 0,
      })),
    );
  }, 90_000);

  it.each([
    ['a relay id (a 2025 upstream’s elicitation)', 'repo__confirm', { question: 'Whose?' }],
    ['a bridge id (a 2026 upstream’s input_required)', 'mr__confirm_deploy', { env: 'whose' }],
  ])(
    '%s is answered only from the session it was put to: another session of the caller, or none, is 403 and goes nowhere',
    async (_kind, name, args) => {
      const asker = await session();
      const other = await session();
      const { call, askedId } = await asking(asker, name, args);
      const before = { repo: repo.requests.length, mr: mr.calls().length };
      const body = (approve: boolean) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: askedId,
          result: { action: 'accept', content: { approve, confirm: approve } },
        });
      const { 'mcp-session-id': _s, ...sessionless } = asker;
      for (const [url, headers] of [
        [b.mcpUrl, other],
        [a.mcpUrl, other],
        [b.mcpUrl, sessionless],
      ] as const) {
        const refused = await postRaw(url, body(false), headers);
        expect([refused.status, refused.json?.error?.code]).toEqual([403, -32600]);
        expect(refused.json.error.message).toContain('another session');
      }
      // the asking session's own answer, on the other replica, still goes through
      const own = await postRaw(b.mcpUrl, body(true), asker);
      expect(own.status).toBe(202);
      const result = await call.waitForMessage((m) => m.id === 7, 15_000);
      call.close();
      expect(JSON.stringify(result.result)).not.toContain('false');
      // nothing of the refused answers reached an upstream (the asking replica's word that the
      // call ended, which the upstream drops as answered, is no client's answer)
      const answers = repo.requests
        .slice(before.repo)
        .filter((r) => r.httpMethod === 'POST' && r.rpcMethod === undefined)
        .map((r) => (r.body as { result?: unknown }).result)
        .filter((result) => result !== undefined);
      expect(answers).toEqual(
        name.startsWith('repo__')
          ? [{ action: 'accept', content: { approve: true, confirm: true } }]
          : [],
      );
      expect(
        mr
          .calls()
          .slice(before.mr)
          .filter((c) => c.params.inputResponses !== undefined)
          .map((c) => JSON.stringify(c.params.inputResponses)),
      ).toEqual(name.startsWith('mr__') ? [expect.stringContaining('true')] : []);
    },
    60_000,
  );

  it('a late one, on the other replica after its call ended, is 400 (no call waits for it) and never reaches the upstream', async () => {
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
