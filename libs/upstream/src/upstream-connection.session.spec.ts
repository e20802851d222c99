import type http from 'node:http';
import { Agent } from 'undici';
import { TestServer, parseJsonBody, sendJson, type SeenRequest } from './testing/test-server';
import { MAX_MESSAGE_DEPTH, UpstreamConnection } from './upstream-connection';
import { UpstreamFailure, type UpstreamEndpoint } from './upstream-types';

/**
 * What goes on session-level traffic (docs/security.md, "Credentials towards sources"), who
 * answers a server request that belongs to no caller, and answers nested too deep.
 */

const GATEWAY = { authorization: 'Bearer gateway-own' };
const CALLER = { authorization: 'Bearer caller-a', 'x-tenant': 'tenant-a' };

function endpoint(url: string, sessionHeaders?: UpstreamEndpoint['sessionHeaders']) {
  return {
    id: 'sess',
    url,
    protocol: '2025-11-25' as const,
    connectMillis: 1000,
    maxAnswerBytes: 4 * 1024 * 1024,
    clientInfo: { name: 'gw', version: '1' },
    clientCapabilities: {},
    sessionHeaders,
  };
}

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

async function eventually(check: () => boolean, millis = 3000): Promise<void> {
  const end = Date.now() + millis;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function failureOf(promise: Promise<unknown>): Promise<UpstreamFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamFailure) return err;
    throw err;
  }
  throw new Error('expected an UpstreamFailure');
}

/**
 * A 2025 upstream with sessions `s1`, `s2`, …: `forget()` makes the current one answer 404;
 * GET opens a stream that `push` writes to; `answer` scripts tools/call and tools/list.
 */
class SessionUpstream {
  private current = 0;
  private lost = false;
  private readonly streams = new Set<http.ServerResponse>();
  answer: (body: Record<string, unknown>, res: http.ServerResponse) => void = (body, res) =>
    sendJson(res, 200, { jsonrpc: '2.0', id: body.id, result: { content: [] } });
  /** Sent before the response on an SSE answer to initialize (none: a JSON answer). */
  initializeEvents: unknown[] = [];
  /** Sent on a 200 SSE answer to notifications/initialized (none: 202). */
  initializedEvents: unknown[] = [];

  private constructor(readonly server: TestServer) {}

  static async start(): Promise<SessionUpstream> {
    const holder: { upstream?: SessionUpstream } = {};
    const server = await TestServer.start((req, res, raw) =>
      holder.upstream?.handle(req, res, raw),
    );
    holder.upstream = new SessionUpstream(server);
    return holder.upstream;
  }

  get seen(): SeenRequest[] {
    return this.server.seen;
  }

  get url(): string {
    return this.server.url;
  }

  forget(): void {
    this.lost = true;
  }

  push(message: unknown): void {
    for (const res of this.streams) res.write(`data: ${JSON.stringify(message)}\n\n`);
  }

  /** Responses (no method) the gateway POSTed back. */
  answers(): Record<string, unknown>[] {
    return this.seen
      .filter((s) => s.method === 'POST' && s.body !== undefined && s.body.method === undefined)
      .map((s) => s.body!);
  }

  close(): void {
    for (const res of this.streams) res.end();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    const body = parseJsonBody(raw);
    const sid = req.headers['mcp-session-id'];
    if (body?.method === 'initialize') {
      this.current++;
      this.lost = false;
      const sse = this.initializeEvents.length > 0;
      res.writeHead(200, {
        'content-type': sse ? 'text/event-stream' : 'application/json',
        'mcp-session-id': `s${this.current}`,
      });
      const response = JSON.stringify({
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'sess', version: '1' },
        },
      });
      if (!sse) return void res.end(response);
      for (const event of this.initializeEvents) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end(`data: ${response}\n\n`);
      return;
    }
    if (body?.method === 'notifications/initialized' && this.initializedEvents.length > 0) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': not valid JSON-RPC follows\n\ndata: {not json\n\n');
      for (const event of this.initializedEvents) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end();
      return;
    }
    if (sid !== `s${this.current}` || this.lost) {
      sendJson(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'gone' } });
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      this.streams.add(res);
      res.on('close', () => this.streams.delete(res));
      return;
    }
    if (req.method === 'DELETE' || body?.id === undefined || body.method === undefined) {
      res.writeHead(202);
      res.end();
      return;
    }
    this.answer(body, res);
  }
}

describe('UpstreamConnection: session-level traffic, unowned requests, nesting', () => {
  let agent: Agent;
  let upstream: SessionUpstream;
  let connection: UpstreamConnection;

  beforeEach(async () => {
    agent = new Agent({ keepAliveTimeout: 1000 });
    upstream = await SessionUpstream.start();
    connection = new UpstreamConnection(
      endpoint(upstream.url, () => GATEWAY),
      agent,
    );
  });

  afterEach(async () => {
    upstream.close();
    await connection.close();
    await upstream.server.stop();
    await agent.close();
  });

  it("re-initializes a lost session with the gateway's own credential, never the caller's; the caller's goes on its own request only", async () => {
    await connection.request(
      'tools/call',
      { name: 't' },
      { deadlineMillis: 3000, headers: CALLER },
    );
    upstream.forget();
    await connection.request(
      'tools/call',
      { name: 't' },
      { deadlineMillis: 3000, headers: CALLER },
    );
    await eventually(() => upstream.seen.filter((s) => s.method === 'GET').length >= 2);
    await connection.close();

    const session = upstream.seen.filter(
      (s) => s.method !== 'POST' || s.body?.method !== 'tools/call',
    );
    expect(session.map((s) => (s.body?.method as string | undefined) ?? s.method)).toEqual(
      expect.arrayContaining(['initialize', 'notifications/initialized', 'GET', 'DELETE']),
    );
    expect(session.filter((s) => s.body?.method === 'initialize')).toHaveLength(2);
    for (const s of session) {
      expect(s.headers.authorization).toBe(GATEWAY.authorization);
      expect(s.headers['x-tenant']).toBeUndefined();
    }
    const calls = upstream.seen.filter((s) => s.body?.method === 'tools/call');
    expect(calls).toHaveLength(3); // the first, the one answered 404, its repetition
    for (const s of calls) {
      expect(s.headers.authorization).toBe(CALLER.authorization);
      expect(s.headers['x-tenant']).toBe('tenant-a');
    }
  });

  it('sends no Authorization at all on session-level traffic when the gateway has no credential of its own', async () => {
    const bare = new UpstreamConnection(endpoint(upstream.url), agent);
    try {
      await bare.request('tools/call', { name: 't' }, { deadlineMillis: 3000, headers: CALLER });
      await eventually(() => upstream.seen.some((s) => s.method === 'GET'));
    } finally {
      await bare.close();
    }
    const session = upstream.seen.filter((s) => s.body?.method !== 'tools/call');
    expect(session.length).toBeGreaterThanOrEqual(4);
    for (const s of session) expect(s.headers.authorization).toBeUndefined();
  });

  it("probes a 2026 upstream's era with the gateway's own credential; the caller's goes on its request only", async () => {
    const modern = await TestServer.start((_req, res, raw) => {
      const body = parseJsonBody(raw);
      const result =
        body?.method === 'server/discover'
          ? {
              supportedVersions: ['2026-07-28'],
              capabilities: { tools: {} },
              resultType: 'complete',
            }
          : { content: [], resultType: 'complete' };
      sendJson(res, 200, { jsonrpc: '2.0', id: body?.id, result });
    });
    const c = new UpstreamConnection(
      { ...endpoint(modern.url, () => GATEWAY), protocol: 'auto' },
      agent,
    );
    try {
      await c.request('tools/call', { name: 't' }, { deadlineMillis: 3000, headers: CALLER });
      expect(c.era).toBe('2026');
    } finally {
      await c.close();
      await modern.stop();
    }
    const probe = modern.last('server/discover')!;
    expect(probe.headers.authorization).toBe(GATEWAY.authorization);
    expect(probe.headers['x-tenant']).toBeUndefined();
    expect(modern.last('tools/call')!.headers).toMatchObject(CALLER);
  });

  it("fails the connect as `credential` when the gateway's own credential cannot be had", async () => {
    const broken = new UpstreamConnection(
      endpoint(upstream.url, () => Promise.reject(new Error('token endpoint down'))),
      agent,
    );
    const failure = await failureOf(broken.connect({ deadlineMillis: 2000 }));
    expect(failure.kind).toBe('credential');
    expect(upstream.seen).toHaveLength(0);
  });

  it('answers a server request on the GET stream -32601 at once, with the gateway credential; a ping still gets its result', async () => {
    const emitted: unknown[] = [];
    connection.onUnsolicited((m) => emitted.push(m));
    await connection.connect({ deadlineMillis: 3000 });
    await eventually(() => upstream.seen.some((s) => s.method === 'GET'));
    await new Promise((r) => setTimeout(r, 50));
    upstream.push({ jsonrpc: '2.0', id: 'samp-1', method: 'sampling/createMessage', params: {} });
    upstream.push({ jsonrpc: '2.0', id: 'eli-1', method: 'elicitation/create', params: {} });
    upstream.push({ jsonrpc: '2.0', id: 'ping-1', method: 'ping' });
    await eventually(() => upstream.answers().length >= 3);
    const byId = new Map(upstream.answers().map((a) => [a.id, a]));
    expect(byId.get('samp-1')).toMatchObject({ error: { code: -32601 } });
    expect(byId.get('eli-1')).toMatchObject({ error: { code: -32601 } });
    expect(byId.get('ping-1')).toEqual({ jsonrpc: '2.0', id: 'ping-1', result: {} });
    const answerRequests = upstream.seen.filter(
      (s) => s.method === 'POST' && s.body?.method === undefined,
    );
    for (const s of answerRequests) {
      expect(s.headers.authorization).toBe(GATEWAY.authorization);
      expect(s.headers['mcp-session-id']).toBe('s1');
    }
    expect(emitted).toEqual([]);
  });

  it('answers a server request inside an answer sent without onMessage (a list pull) -32601; with onMessage it is the caller\u2019s', async () => {
    upstream.answer = (body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: `ask-${String(body.id)}`, method: 'elicitation/create', params: {} })}\n\n`,
      );
      res.end(
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { tools: [] } })}\n\n`,
      );
    };
    await connection.request('tools/list', undefined, { deadlineMillis: 3000 });
    await eventually(() => upstream.answers().length >= 1);
    expect(upstream.answers()[0]).toMatchObject({ error: { code: -32601 } });
    expect(upstream.answers()[0]!.id).toMatch(/^ask-/);

    const relayed: unknown[] = [];
    await connection.request('tools/list', undefined, {
      deadlineMillis: 3000,
      onMessage: (m) => relayed.push(m),
    });
    expect(relayed).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(upstream.answers()).toHaveLength(1);
  });

  it('bounds the answers it owes: 5,000 server requests in one initialize answer get the first 72 answered, the call still succeeds', async () => {
    upstream.initializeEvents = Array.from({ length: 5000 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'roots/list',
    }));
    const answer = await connection.request(
      'tools/call',
      { name: 't' },
      { deadlineMillis: 10_000, headers: CALLER },
    );
    expect(answer.kind).toBe('result');
    // 8 in flight and 64 waiting: the rest are dropped (and logged)
    await eventually(() => upstream.answers().length >= 72, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(upstream.answers()).toHaveLength(72);
    const ids = upstream.answers().map((a) => a.id as number);
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 72 }, (_, i) => i));
  });

  it("answers a server request inside initialize's SSE answer -32601 (a ping: its result), with the gateway credential, on the session that answer opens", async () => {
    upstream.initializeEvents = [
      { jsonrpc: '2.0', id: 'init-samp', method: 'sampling/createMessage', params: {} },
      { jsonrpc: '2.0', id: 'init-roots', method: 'roots/list' },
      { jsonrpc: '2.0', id: 'init-ping', method: 'ping' },
    ];
    upstream.initializedEvents = [
      { jsonrpc: '2.0', id: 'inited-eli', method: 'elicitation/create', params: {} },
    ];
    const emitted: unknown[] = [];
    connection.onUnsolicited((m) => emitted.push(m));
    const answer = await connection.request(
      'tools/call',
      { name: 't' },
      { deadlineMillis: 3000, headers: CALLER },
    );
    expect(answer.kind).toBe('result');
    expect(connection.sessionId).toBe('s1');
    await eventually(() => upstream.answers().length >= 4);
    const byId = new Map(upstream.answers().map((a) => [a.id, a]));
    for (const id of ['init-samp', 'init-roots', 'inited-eli'])
      expect(byId.get(id)).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601 } });
    expect(byId.get('init-ping')).toEqual({ jsonrpc: '2.0', id: 'init-ping', result: {} });
    const answerRequests = upstream.seen.filter(
      (s) => s.method === 'POST' && s.body?.method === undefined,
    );
    expect(answerRequests).toHaveLength(4);
    for (const s of answerRequests) {
      expect(s.headers.authorization).toBe(GATEWAY.authorization);
      expect(s.headers['x-tenant']).toBeUndefined();
      expect(s.headers['mcp-session-id']).toBe('s1');
    }
    expect(emitted).toEqual([]);
  });

  it("answers a server request inside the era probe's SSE answer -32601, sessionless, with the gateway credential", async () => {
    const probed = await TestServer.start((_req, res, raw) => {
      const body = parseJsonBody(raw);
      if (body?.method === 'server/discover') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', id: 'probe-eli', method: 'elicitation/create', params: {} })}\n\n`,
        );
        res.end(
          `data: ${JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: {
              supportedVersions: ['2026-07-28'],
              capabilities: { tools: {} },
              resultType: 'complete',
            },
          })}\n\n`,
        );
        return;
      }
      if (body?.method === undefined) return void res.writeHead(202).end();
      sendJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: { content: [], resultType: 'complete' },
      });
    });
    const c = new UpstreamConnection(
      { ...endpoint(probed.url, () => GATEWAY), protocol: 'auto' },
      agent,
    );
    try {
      const answer = await c.request(
        'tools/call',
        { name: 't' },
        { deadlineMillis: 3000, headers: CALLER },
      );
      expect(answer.kind).toBe('result');
      expect(c.era).toBe('2026');
      await eventually(() => probed.seen.some((s) => s.body?.id === 'probe-eli'));
    } finally {
      await c.close();
      await probed.stop();
    }
    const sent = probed.seen.find((s) => s.body?.id === 'probe-eli')!;
    expect(sent.body).toMatchObject({ jsonrpc: '2.0', id: 'probe-eli', error: { code: -32601 } });
    expect(sent.body?.method).toBeUndefined();
    expect(sent.headers.authorization).toBe(GATEWAY.authorization);
    expect(sent.headers['x-tenant']).toBeUndefined();
    expect(sent.headers['mcp-session-id']).toBeUndefined();
  });

  it.each([
    ['a JSON answer', false],
    ['an SSE answer', true],
  ])(
    `refuses %s nested deeper than ${MAX_MESSAGE_DEPTH} levels as too-deep, before parsing it`,
    async (_label, sse) => {
      upstream.answer = (body, res) => {
        const text = `{"jsonrpc":"2.0","id":${String(body.id)},"result":{"structuredContent":${nested(100_000)}}}`;
        if (sse) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${text}\n\n`);
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(text);
        }
      };
      const failure = await failureOf(
        connection.request('tools/call', { name: 't' }, { deadlineMillis: 5000 }),
      );
      expect(failure.kind).toBe('too-deep');
      expect(failure.message).toContain(`deeper than ${MAX_MESSAGE_DEPTH} levels`);
    },
  );

  it('refuses a call whose stream carries a relayed message nested too deep; an answer at the limit passes', async () => {
    upstream.answer = (body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: {"jsonrpc":"2.0","method":"notifications/message","params":${nested(100_000)}}\n\n`,
      );
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} })}\n\n`);
    };
    const relayed: unknown[] = [];
    const failure = await failureOf(
      connection.request(
        'tools/call',
        { name: 't' },
        { deadlineMillis: 5000, onMessage: (m) => relayed.push(m) },
      ),
    );
    expect(failure.kind).toBe('too-deep');
    expect(relayed).toEqual([]);

    // message (1) + result (2) + structuredContent and below: exactly the limit
    upstream.answer = (body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `{"jsonrpc":"2.0","id":${String(body.id)},"result":{"structuredContent":${nested(MAX_MESSAGE_DEPTH - 2)}}}`,
      );
    };
    const answer = await connection.request('tools/call', { name: 't' }, { deadlineMillis: 5000 });
    expect(answer.kind).toBe('result');
  });

  it('drops a GET-stream message nested too deep and goes on with the next one', async () => {
    const emitted: unknown[] = [];
    connection.onUnsolicited((m) => emitted.push(m));
    await connection.connect({ deadlineMillis: 3000 });
    await eventually(() => upstream.seen.some((s) => s.method === 'GET'));
    await new Promise((r) => setTimeout(r, 50));
    upstream.push(
      JSON.parse(`{"jsonrpc":"2.0","method":"notifications/message","params":${nested(500)}}`),
    );
    upstream.push({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await eventually(() => emitted.length >= 1);
    expect(emitted).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
  });
});
