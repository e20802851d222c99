import type { UpstreamDefinition } from '@app/config';
import { CallCancellation, type UpstreamExecutor, type UpstreamOutcome } from '@app/execution';
import type { CatalogRefresh, RegistryService } from '@app/registry';
import type { RelayIds } from './relay-ids';
import { SerializedResult, type MethodContext } from '../methods/method-handler';
import { UpstreamRouter } from './upstream-router';
import { SessionLogLevels } from '../session/session-log-levels';
import type { TakeOnce } from './take-once';

const upstream = { id: 'up' } as UpstreamDefinition;
const context: MethodContext = { protocolVersion: '2025-11-25', headers: {}, rawBody: '' };
const refreshes: string[] = [];
const refresh = {
  refreshForUnknownTool: () => {
    refreshes.push('refresh');
    return Promise.resolve();
  },
} as unknown as CatalogRefresh;

function routerAnswering(outcome: UpstreamOutcome): UpstreamRouter {
  const executor = { forward: () => Promise.resolve(outcome) } as unknown as UpstreamExecutor;
  return new UpstreamRouter(
    executor,
    {} as RelayIds,
    {
      enabledUpstreams: () => [],
    } as unknown as RegistryService,
    new SessionLogLevels(),
    refresh,
  );
}

/**
 * A router whose upstream sends log messages at these levels during the request, then answers;
 * what the executor was sent is kept.
 */
function routerLogging(
  levels: string[],
  logLevels = new SessionLogLevels(),
): { router: UpstreamRouter; sent: (Record<string, unknown> | undefined)[] } {
  const sent: (Record<string, unknown> | undefined)[] = [];
  const executor = {
    forward: (
      _u: unknown,
      _m: string,
      params: Record<string, unknown> | undefined,
      call: { onMessage: (message: Record<string, unknown>, origin: object) => void },
    ) => {
      sent.push(params);
      for (const level of levels)
        call.onMessage(
          { jsonrpc: '2.0', method: 'notifications/message', params: { level, data: level } },
          {},
        );
      // the client's own progress, another's, a response and other notifications: only the
      // first is this call's (docs/operations.md §10 "Relaying")
      for (const progressToken of ['p', 'other'])
        call.onMessage(
          {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken, progress: 1 },
          },
          {},
        );
      call.onMessage({ jsonrpc: '2.0', id: 0, result: { content: [] } }, {});
      for (const method of ['notifications/tools/list_changed', 'notifications/cancelled'])
        call.onMessage({ jsonrpc: '2.0', method, params: {} }, {});
      return Promise.resolve({ kind: 'result', result: {} });
    },
  } as unknown as UpstreamExecutor;
  const router = new UpstreamRouter(
    executor,
    {} as RelayIds,
    { enabledUpstreams: () => [] } as unknown as RegistryService,
    logLevels,
    refresh,
  );
  return { router, sent };
}

describe('UpstreamRouter.forward: log messages as the client asked (docs/operations.md §10 "Logging")', () => {
  const ALL = ['debug', 'info', 'warning', 'error'];
  const relayedOf = async (
    router: UpstreamRouter,
    ctx: MethodContext,
    params?: Record<string, unknown>,
  ): Promise<unknown[]> => {
    const relayed: any[] = [];
    await router.forward(upstream, 'tools/call', params, { ...ctx, relay: (m) => relayed.push(m) });
    return relayed.map((m) =>
      m.method === 'notifications/message'
        ? m.params.level
        : m.method === 'notifications/progress'
          ? `progress:${m.params.progressToken}`
          : (m.method ?? 'a response'),
    );
  };
  const token = { progressToken: 'p' };
  const PROGRESS = 'progress:p';

  it('a 2026 request without logLevel gets no log message (its own progress still)', async () => {
    const { router } = routerLogging(ALL);
    const modern: MethodContext = { protocolVersion: '2026-07-28', headers: {}, rawBody: '' };
    expect(await relayedOf(router, modern, { name: 't', _meta: token })).toEqual([PROGRESS]);
  });

  it('a request without a progressToken gets no progress; nobody gets a response or another notification', async () => {
    const { router } = routerLogging([]);
    const modern: MethodContext = { protocolVersion: '2026-07-28', headers: {}, rawBody: '' };
    expect(await relayedOf(router, modern, { name: 't' })).toEqual([]);
    expect(await relayedOf(router, context, { name: 't' })).toEqual([]);
  });

  it('a 2026 request with logLevel warning gets warning and error only', async () => {
    const { router } = routerLogging(ALL);
    const modern: MethodContext = { protocolVersion: '2026-07-28', headers: {}, rawBody: '' };
    expect(
      await relayedOf(router, modern, {
        name: 't',
        _meta: { ...token, 'io.modelcontextprotocol/logLevel': 'warning' },
      }),
    ).toEqual(['warning', 'error', PROGRESS]);
  });

  it('a 2025 session that set no level gets every message', async () => {
    const { router } = routerLogging(ALL);
    expect(await relayedOf(router, context, { name: 't', _meta: token })).toEqual([
      ...ALL,
      PROGRESS,
    ]);
  });

  it("a 2025 session's setLevel filters what it gets and goes to the upstream in _meta", async () => {
    const levels = new SessionLogLevels();
    await levels.set('sid-1', 'error', Date.now() + 60_000);
    const { router, sent } = routerLogging(ALL, levels);
    const session: MethodContext = { ...context, sessionId: 'sid-1' };
    expect(await relayedOf(router, session, { name: 't', _meta: token })).toEqual([
      'error',
      PROGRESS,
    ]);
    expect(sent[0]).toEqual({
      name: 't',
      _meta: { progressToken: 'p', 'io.modelcontextprotocol/logLevel': 'error' },
    });
    // another session is not filtered by it
    const other: MethodContext = { ...context, sessionId: 'sid-2' };
    expect(await relayedOf(router, other, { name: 't', _meta: token })).toEqual([...ALL, PROGRESS]);
  });
});

describe('UpstreamRouter.forward: the result as the upstream wrote it', () => {
  it('passes a 2025 result on as its own text (numbers and escapes as sent)', async () => {
    const resultText = '{"content":[{"type":"text","text":"caf\\u00e9"}],"n":1.50}';
    const result = JSON.parse(resultText) as Record<string, unknown>;
    const answer = await routerAnswering({ kind: 'result', result, resultText }).forward(
      upstream,
      'tools/call',
      {},
      context,
    );
    expect(answer).toBeInstanceOf(SerializedResult);
    expect((answer as SerializedResult).json).toBe(resultText);
    expect((answer as SerializedResult).value).toBe(result);
  });

  it('passes a 2026 result on as its own text with the envelope members cut out', async () => {
    const resultText =
      '{"content":[],"n":12345678901234567890,"resultType":"complete","ttlMs":0,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"x/y":1.0}}';
    const answer = await routerAnswering({
      kind: 'result',
      result: JSON.parse(resultText) as Record<string, unknown>,
      resultText,
    }).forward(upstream, 'tools/call', {}, context);
    expect(answer).toBeInstanceOf(SerializedResult);
    expect((answer as SerializedResult).json).toBe(
      '{"content":[],"n":12345678901234567890,"_meta":{"x/y":1.0}}',
    );
    expect((answer as SerializedResult).value).toEqual({
      content: [],
      n: Number('12345678901234567890'),
      _meta: { 'x/y': 1 },
    });
  });

  it('serializes a 2026 result again when a member name is written twice (only the last counts)', async () => {
    const resultText = '{"content":[1],"resultType":"complete","content":[]}';
    const answer = await routerAnswering({
      kind: 'result',
      result: JSON.parse(resultText) as Record<string, unknown>,
      resultText,
    }).forward(upstream, 'tools/call', {}, context);
    expect(answer).toEqual({ content: [] });
    expect(answer).not.toBeInstanceOf(SerializedResult);
  });

  it('serializes a result whose text holds a line break (it must fit in one SSE data line)', async () => {
    const resultText = '{\n  "content": []\n}';
    const answer = await routerAnswering({
      kind: 'result',
      result: JSON.parse(resultText) as Record<string, unknown>,
      resultText,
    }).forward(upstream, 'tools/call', {}, context);
    expect(answer).toEqual({ content: [] });
    expect(answer).not.toBeInstanceOf(SerializedResult);
  });

  it('returns the object when there is no text', async () => {
    const result = { content: [] };
    const answer = await routerAnswering({ kind: 'result', result }).forward(
      upstream,
      'tools/call',
      {},
      context,
    );
    expect(answer).toBe(result);
  });
});

describe('UpstreamRouter.forward: one mapping of the upstream outcome to the wire (docs/operations.md §10 "Routing")', () => {
  beforeEach(() => refreshes.splice(0));

  it('a failure of tools/call is an isError result the model can read', async () => {
    const answer = await routerAnswering({
      kind: 'failed',
      message: 'Upstream up timed out',
    } as UpstreamOutcome).forward(upstream, 'tools/call', {}, context);
    expect(answer).toEqual({
      content: [{ type: 'text', text: 'Upstream up timed out' }],
      isError: true,
    });
  });

  it('a failure of any other method is -32603 with its message', async () => {
    const router = routerAnswering({
      kind: 'failed',
      message: 'Upstream up is unreachable',
    } as UpstreamOutcome);
    for (const method of ['prompts/get', 'resources/read', 'completion/complete'])
      await expect(router.forward(upstream, method, {}, context)).rejects.toMatchObject({
        rpcCode: -32603,
        message: 'Upstream up is unreachable',
      });
  });

  it("an upstream's JSON-RPC error keeps its code, message and data", async () => {
    const router = routerAnswering({
      kind: 'error',
      code: -32001,
      message: 'quota',
      data: { left: 0 },
    });
    await expect(router.forward(upstream, 'tools/call', {}, context)).rejects.toMatchObject({
      rpcCode: -32001,
      message: 'quota',
      rpcData: { left: 0 },
    });
    expect(refreshes).toEqual([]);
  });

  it('-32602 for a tool the upstream listed asks for one refresh (its lists are stale); other methods do not', async () => {
    const router = routerAnswering({
      kind: 'error',
      code: -32602,
      message: 'Unknown tool',
    });
    await expect(router.forward(upstream, 'tools/call', {}, context)).rejects.toMatchObject({
      rpcCode: -32602,
    });
    expect(refreshes).toEqual(['refresh']);
    await expect(router.forward(upstream, 'prompts/get', {}, context)).rejects.toMatchObject({
      rpcCode: -32602,
    });
    expect(refreshes).toEqual(['refresh']);
  });
});

describe("UpstreamRouter.forward: a 2025 upstream's -32042 (URL elicitation required)", () => {
  const outcome = {
    kind: 'error',
    code: -32042,
    message: 'Open the URL first',
    data: { elicitations: [{ mode: 'url', url: 'https://auth.example.com/x' }] },
  } as unknown as UpstreamOutcome;
  const modern: MethodContext = { protocolVersion: '2026-07-28', headers: {}, rawBody: '' };

  it('reaches a 2025 client as it came, and a 2026 one as it came where input_required can ask it (MrtrCalls maps it)', async () => {
    await expect(
      routerAnswering(outcome).forward(upstream, 'completion/complete', {}, context),
    ).rejects.toMatchObject({ rpcCode: -32042 });
    await expect(
      routerAnswering(outcome).forward(upstream, 'tools/call', { name: 't' }, modern),
    ).rejects.toMatchObject({ rpcCode: -32042 });
  });

  it('is -32603 saying why to a 2026 client on a method that cannot ask (a code 2026-07-28 does not define)', async () => {
    await expect(
      routerAnswering(outcome).forward(upstream, 'completion/complete', {}, modern),
    ).rejects.toMatchObject({
      rpcCode: -32603,
      message: expect.stringContaining('needs the client to open a URL first'),
    });
  });
});

describe('UpstreamRouter.deliverAnswer: one answer per relayed request, on every replica (docs/security.md "Answers to relayed requests")', () => {
  const message = { jsonrpc: '2.0' as const, id: 'gw-relay.k.x', result: { action: 'accept' } };
  const relayIds = {
    open: () => ({ kind: 'origin', origin: { upstream: 'up', session: 's', id: 1 } }),
    ttlMillis: 60_000,
  } as unknown as RelayIds;

  /** A replica: its router, posting to one upstream whose count of answers it shares. */
  function replica(posted: { count: number }, once: TakeOnce | null): UpstreamRouter {
    const executor = {
      respond: () => {
        posted.count++;
        return Promise.resolve(true);
      },
    } as unknown as UpstreamExecutor;
    return new UpstreamRouter(
      executor,
      relayIds,
      { enabledUpstreams: () => [upstream] } as unknown as RegistryService,
      new SessionLogLevels(),
      refresh,
      once,
    );
  }

  /** Redis as takeOnce uses it: SET NX, answered a tick later (two replicas ask at once). */
  function redis(): TakeOnce {
    const taken = new Set<string>();
    return {
      takeOnce: async (key: string) => {
        await new Promise((r) => setImmediate(r));
        if (taken.has(key)) return false;
        taken.add(key);
        return true;
      },
    };
  }

  it('the same answer on two replicas at once, twice each: delivered once, the others not-waited', async () => {
    const posted = { count: 0 };
    const shared = redis();
    const [a, b] = [replica(posted, shared), replica(posted, shared)];
    const outcomes = await Promise.all([a, b, b, a].map((r) => r.deliverAnswer(message, context)));
    expect(outcomes.sort()).toEqual(['delivered', 'not-waited', 'not-waited', 'not-waited']);
    expect(posted.count).toBe(1);
  });

  it('Redis not answering (or none): each replica decides alone, once each, as without Redis', async () => {
    const posted = { count: 0 };
    const down: TakeOnce = { takeOnce: () => Promise.resolve(undefined) };
    const [a, b] = [replica(posted, down), replica(posted, null)];
    const outcomes = await Promise.all([a, b, b, a].map((r) => r.deliverAnswer(message, context)));
    expect(outcomes.sort()).toEqual(['delivered', 'delivered', 'not-waited', 'not-waited']);
    expect(posted.count).toBe(2);
  });
});

describe('UpstreamRouter.forward: a 2025 session\'s id expiring while a relayed request awaits its answer (docs/operations.md §9 "Ending a session")', () => {
  const relayIds = {
    seal: () => 'gw-relay.sealed',
    open: () => ({ kind: 'origin', origin: { upstream: 'up', session: 's', id: 1 } }),
    ttlMillis: 60_000,
  } as unknown as RelayIds;
  const executorOf = (taken: string[]) =>
    ({
      forward: (
        _u: unknown,
        _m: string,
        _p: unknown,
        call: {
          signal: CallCancellation;
          onMessage: (message: Record<string, unknown>, origin: object) => void;
        },
      ) => {
        call.onMessage(
          { jsonrpc: '2.0', id: 1, method: 'elicitation/create', params: {} },
          { sessionId: 's' },
        );
        return new Promise<UpstreamOutcome>((resolve) => {
          call.signal.onAbort(() =>
            resolve({
              kind: 'failed',
              failureKind: 'cancelled',
              message: 'cancelled',
              mayHaveRun: false,
            }),
          );
          taken.push('waiting');
        });
      },
      respond: () => Promise.resolve(true),
    }) as unknown as UpstreamExecutor;

  /** Redis as takeOnce uses it (SET NX), recording each key asked. */
  function redis(asked: string[]): TakeOnce {
    const taken = new Set<string>();
    return {
      takeOnce: (key: string) => {
        asked.push(key);
        if (taken.has(key)) return Promise.resolve(false);
        taken.add(key);
        return Promise.resolve(true);
      },
    };
  }

  function replica(once: TakeOnce, log: string[]): UpstreamRouter {
    return new UpstreamRouter(
      executorOf(log),
      relayIds,
      { enabledUpstreams: () => [upstream] } as unknown as RegistryService,
      new SessionLogLevels(),
      refresh,
      once,
    );
  }

  const expiringContext = (signal: CallCancellation): MethodContext => ({
    ...context,
    sessionId: 'client-session',
    sessionExpiresAtMs: Date.now() + 20,
    signal,
    relay: () => undefined,
  });

  it('a call still waiting for the answer ends then (session-expired), its upstream request cancelled', async () => {
    const asked: string[] = [];
    const call = new CallCancellation();
    const result = await replica(redis(asked), []).forward(
      upstream,
      'tools/call',
      { name: 't' },
      expiringContext(call),
    );
    expect(call.reason).toBe('session-expired');
    expect(result).toMatchObject({ isError: true });
  });

  it('a call whose request was answered on another replica first goes on', async () => {
    const asked: string[] = [];
    const shared = redis(asked);
    const call = new CallCancellation();
    const log: string[] = [];
    const running = replica(shared, log).forward(
      upstream,
      'tools/call',
      { name: 't' },
      expiringContext(call),
    );
    // the request was relayed within forward's first tick (no Redis for the log level), and
    // the answer below settles in microtasks: before any timer, the expiry's included
    expect(log).toEqual(['waiting']);
    // the client's answer, on replica b, takes the request in Redis before the id expires
    expect(
      await replica(shared, []).deliverAnswer(
        { jsonrpc: '2.0', id: 'gw-relay.sealed', result: { action: 'accept' } },
        context,
      ),
    ).toBe('delivered');
    const before = asked.length;
    // the expiry comes: replica a asks Redis, finds the request answered, and leaves the call be
    await waitUntil(() => asked.length > before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(call.aborted).toBe(false);
    call.abort('cancelled');
    await running;
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}
