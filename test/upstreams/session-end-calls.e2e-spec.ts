import { request } from 'node:http';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { V2MrtrUpstream } from '../mrtr/mrtr-upstreams';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { postRaw, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

/** How long an upstream call may run: far longer than any wait below, so a call that ends is ended by its session's end. */
const CALL_MILLIS = 90_000;

function sendDelete(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'DELETE', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function endedCalls(
  gateway: GatewayProcess,
  reason: 'deleted' | 'expired' = 'deleted',
): Promise<number> {
  const text = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`mcp_gateway_session_ended_calls_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/**
 * A 2025 session's calls end with the session (2025-11-25 transports, "Session Management";
 * docs/operations.md §9 "Ending a session"): one parked on its client's answer to a request the
 * gateway put to it (a 2025 upstream's elicitation under a relay id, a 2026 upstream's
 * input_required under a bridge id) can never be answered once its session is DELETEd — the
 * answer's POST is 404 — so it is ended at once on the replica that holds it, whichever replica
 * the DELETE reached, and its upstream request is cancelled, instead of waiting out
 * callMillis or pendingInputMillis.
 */
describe('calls of a 2025 session that is ended, on two replicas', () => {
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  let a: GatewayProcess;
  let b: GatewayProcess;
  const keyPrefix = uniqueKeyPrefix();
  const open: SseReader[] = [];

  beforeAll(async () => {
    [repo, mr] = await Promise.all([V1Upstream.start(), V2MrtrUpstream.start()]);
    const calls = { timeouts: { callMillis: CALL_MILLIS } };
    const mcp = gatewayConfig([], {
      upstreams: [upstream('repo', repo.url, calls), upstream('mr', mr.url, calls)],
      redis: { keyPrefix },
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
    for (const stream of open) stream.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([repo?.stop(), mr?.stop()]);
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
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
    open.push(call);
    const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
    return { call, askedId: asked.id };
  }

  const cancelledAtRepo = (): number => repo.requestsFor('notifications/cancelled').length;

  it.each([
    {
      kind: 'a relay id (a 2025 upstream’s elicitation)',
      name: 'repo__confirm',
      args: { question: 'Still there?' },
      through: 'b',
    },
    {
      kind: 'a bridge id (a 2026 upstream’s input_required)',
      name: 'mr__confirm_deploy',
      args: { env: 'gone' },
      through: 'b',
    },
    {
      kind: 'a relay id',
      name: 'repo__confirm',
      args: { question: 'Here?' },
      through: 'a, which holds the call',
    },
  ])(
    'a call waiting for its client’s answer to $kind ends as soon as its session is DELETEd (through replica $through)',
    async ({ name, args, through }) => {
      const headers = await session();
      const before = { cancelled: cancelledAtRepo(), counted: await endedCalls(a) };
      const { call, askedId } = await asking(headers, name, args);

      expect(await sendDelete((through === 'b' ? b : a).mcpUrl, headers)).toBe(200);

      // ended within seconds, not at callMillis (90 s) or pendingInputMillis (120 s): the
      // stream ends without a response, as the SDK servers close a terminated session's streams
      await call.waitForEnd(20_000);
      expect(call.messages.filter((m: { id?: unknown }) => m.id === 7)).toEqual([]);
      if (name.startsWith('repo__'))
        // the upstream's request is cancelled, as for a client that went away
        await waitFor(
          () => cancelledAtRepo() > before.cancelled,
          10_000,
          () => 'no notifications/cancelled at the upstream',
        );
      // counted on the replica that held the call
      await waitFor(
        async () => (await endedCalls(a)) === before.counted + 1,
        10_000,
        () => 'not counted',
      );
      // and the answer that comes now is refused, as every request of the ended session is
      const late = await postRaw(
        b.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: askedId,
          result: { action: 'accept', content: { approve: true, confirm: true } },
        }),
        headers,
      );
      expect(late.status).toBe(404);
    },
    60_000,
  );

  it('another session’s call waiting for its answer is left alone, and still answered', async () => {
    const ended = await session();
    const kept = await session();
    const { call, askedId } = await asking(kept, 'repo__confirm', { question: 'Mine?' });
    expect(await sendDelete(b.mcpUrl, ended)).toBe(200);
    // the end reached replica a (its own calls would be ended by now): the kept one still waits
    await waitFor(
      async () => (await rpc(a.mcpUrl, 'tools/list', undefined, ended)).status === 404,
      10_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(call.ended).toBe(false);
    const answer = await postRaw(
      b.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: askedId,
        result: { action: 'accept', content: { approve: true } },
      }),
      kept,
    );
    expect(answer.status).toBe(202);
    const result = await call.waitForMessage((m) => m.id === 7, 15_000);
    expect(result.result.isError).not.toBe(true);
  }, 60_000);
});

/**
 * A 2025 session id expires `mcp.session.ttlSeconds` after `initialize` (docs/operations.md §9):
 * from then on the client's answer to a request put to it mid-call is 404 like any POST of the
 * session, so a call parked on that answer ends when the id expires, with an isError result
 * that says so, instead of at pendingInputMillis or callMillis.
 */
describe('calls of a 2025 session whose id expires while they wait for its answer', () => {
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  let gateway: GatewayProcess;
  const open: SseReader[] = [];

  beforeAll(async () => {
    [repo, mr] = await Promise.all([V1Upstream.start(), V2MrtrUpstream.start()]);
    const calls = { timeouts: { callMillis: CALL_MILLIS } };
    gateway = await GatewayProcess.startPatiently({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [upstream('repo', repo.url, calls), upstream('mr', mr.url, calls)],
        }),
        session: { ttlSeconds: 10 },
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    await waitFor(async () => {
      const t = await rpc(gateway.mcpUrl, 'tools/list', {});
      const names = (t.json?.result?.tools ?? []).map((x: { name: string }) => x.name);
      return names.includes('repo__confirm') && names.includes('mr__confirm_deploy');
    }, 30_000);
  }, 120_000);

  afterAll(async () => {
    for (const stream of open) stream.close();
    await gateway?.stop();
    await Promise.all([repo?.stop(), mr?.stop()]);
  });

  it.each([
    { kind: 'a relay id', name: 'repo__confirm', args: { question: 'Expiring?' } },
    { kind: 'a bridge id', name: 'mr__confirm_deploy', args: { env: 'expiring' } },
  ])(
    'a call waiting for its client’s answer to $kind ends when the session id expires, with an isError result',
    async ({ name, args }) => {
      const init = await rpc(gateway.mcpUrl, 'initialize', {
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
      const cancelledBefore = repo.requestsFor('notifications/cancelled').length;
      const countedBefore = await endedCalls(gateway, 'expired');
      const call = await SseReader.open(
        gateway.mcpUrl,
        'POST',
        headers,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      );
      open.push(call);
      await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
      // the id expires 10 s after initialize; callMillis is 90 s and pendingInputMillis 120 s
      const result = await call.waitForMessage((m) => m.id === 7, 30_000);
      expect(result.result.isError).toBe(true);
      expect(result.result.content[0].text).toContain('session');
      expect((await rpc(gateway.mcpUrl, 'tools/list', undefined, headers)).status).toBe(404);
      expect(await endedCalls(gateway, 'expired')).toBe(countedBefore + 1);
      if (name.startsWith('repo__'))
        await waitFor(
          () => repo.requestsFor('notifications/cancelled').length > cancelledBefore,
          10_000,
          () => 'no notifications/cancelled at the upstream',
        );
    },
    60_000,
  );
});

/**
 * A replica that drains (SIGTERM) keeps the calls it holds until its grace period ends
 * (docs/operations.md §2 "Calls nobody waits for"): a call parked on its client's answer is
 * not ended early, since that answer may still reach it through another replica — a relay
 * id's answer is posted to the upstream from there, a bridge id's handed to the holder through
 * Redis.
 */
describe('calls waiting for their answer on a replica that drains', () => {
  let repo: V1Upstream;
  let mr: V2MrtrUpstream;
  const keyPrefix = uniqueKeyPrefix();
  const started: GatewayProcess[] = [];
  const open: SseReader[] = [];

  beforeAll(async () => {
    [repo, mr] = await Promise.all([V1Upstream.start(), V2MrtrUpstream.start()]);
  });

  afterAll(async () => {
    for (const stream of open) stream.close();
    await Promise.all(started.map((g) => g.stop()));
    await Promise.all([repo?.stop(), mr?.stop()]);
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  it.each([
    { kind: 'a relay id', name: 'repo__confirm', args: { question: 'Draining?' } },
    { kind: 'a bridge id', name: 'mr__confirm_deploy', args: { env: 'draining' } },
  ])(
    'one waiting for its client’s answer to $kind is answered through the other replica and finishes',
    async ({ name, args }) => {
      const calls = { timeouts: { callMillis: CALL_MILLIS } };
      const mcp = gatewayConfig([], {
        upstreams: [upstream('repo', repo.url, calls), upstream('mr', mr.url, calls)],
        redis: { keyPrefix },
        shutdown: { gracePeriodSeconds: 30 },
      });
      const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
      const [a, b] = await Promise.all([
        GatewayProcess.startPatiently({ mcp, env }),
        GatewayProcess.startPatiently({ mcp, env }),
      ]);
      started.push(a, b);
      await waitFor(async () => {
        const t = await rpc(a.mcpUrl, 'tools/list', {});
        const names = (t.json?.result?.tools ?? []).map((x: { name: string }) => x.name);
        return names.includes('repo__confirm') && names.includes('mr__confirm_deploy');
      }, 30_000);
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
      open.push(call);
      const asked = await call.waitForMessage((m) => m.method === 'elicitation/create', 15_000);
      const stopped = a.stop();
      // draining: a refuses new requests
      await waitFor(
        async () => (await rpc(a.mcpUrl, 'ping').catch(() => ({ status: 0 }))).status !== 200,
        15_000,
      );
      const answer = await postRaw(
        b.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: asked.id,
          result: { action: 'accept', content: { approve: true, confirm: true } },
        }),
        headers,
      );
      expect(answer.status).toBe(202);
      const result = await call.waitForMessage((m) => m.id === 7, 20_000);
      expect(result.result.isError).not.toBe(true);
      await stopped;
    },
    120_000,
  );
});
