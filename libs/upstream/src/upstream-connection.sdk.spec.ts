import { randomUUID } from 'node:crypto';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { Agent } from 'undici';
import * as z from 'zod';
import { TestServer, parseJsonBody, type TestHandler } from './testing/test-server';
import { UpstreamConnection } from './upstream-connection';
import {
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamEndpoint,
  type UpstreamMessageContext,
  type UpstreamProtocol,
} from './upstream-types';

/**
 * UpstreamConnection against the official SDK servers on 127.0.0.1 ephemeral ports, in this
 * process: a v1 session server (SSE answers), a v1 stateless JSON server, and a v2
 * createMcpHandler server (2026, with its stateless 2025 fallback).
 */

type NodeHandler = TestHandler;

/** What the server received, loosely typed for assertions. */
function seen(server: TestServer): any[] {
  return server.seen;
}

function posts(server: TestServer, method?: string): any[] {
  return server.posts(method);
}

function parsedBody(body: Buffer): any {
  return parseJsonBody(body);
}

// ---- v1 session server ---------------------------------------------------------------------

interface V1Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: V1McpServer;
}

/** The v1 SDK with sessions, as the v1 examples wire it, plus test controls. */
class V1SessionUpstream {
  readonly sessions = new Map<string, V1Session>();
  /** Methods answered 404 (session gone) whatever the session id. */
  readonly lose = new Set<string>();
  readonly cancellations: unknown[] = [];
  initializes = 0;

  readonly handler: NodeHandler = async (req, res, raw) => {
    const body: any = parsedBody(raw);
    const sid = req.headers['mcp-session-id'];
    const id = typeof sid === 'string' ? sid : undefined;
    if (id !== undefined && (!this.sessions.has(id) || this.lose.has(body?.method))) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32001, message: 'Session not found' },
          id: null,
        }),
      );
      return;
    }
    let session = id === undefined ? undefined : this.sessions.get(id);
    if (session === undefined) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
            id: null,
          }),
        );
        return;
      }
      this.initializes++;
      const server = this.makeServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (newId) => {
          this.sessions.set(newId, { transport, server });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      session = { transport, server };
    }
    await session.transport.handleRequest(req, res, body);
  };

  /** Forgets a session: its next request gets 404. */
  expire(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    void session?.transport.close();
  }

  async closeAll(): Promise<void> {
    for (const { transport } of this.sessions.values()) await transport.close();
    this.sessions.clear();
  }

  private makeServer(): V1McpServer {
    const server = new V1McpServer(
      { name: 'v1-test-upstream', version: '1.32.2-test' },
      { capabilities: { logging: {} } },
    );
    server.registerTool(
      'echo',
      { description: 'Echo', inputSchema: { text: z.string() } },
      ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    server.registerTool(
      'progress',
      { description: 'Progress and a log message before the result', inputSchema: {} },
      async (_args, extra) => {
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: 1, total: 2 },
          });
        }
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: 'halfway' },
        });
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: 2, total: 2 },
          });
        }
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    // Asks on the tools/call POST stream (related to the request).
    server.registerTool(
      'ask',
      { description: 'Elicits on the request stream', inputSchema: { env: z.string() } },
      async ({ env }, extra) => {
        const answer = await server.server.elicitInput(
          {
            message: `Deploy to ${env}?`,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean' } },
              required: ['confirm'],
            },
          },
          { relatedRequestId: extra.requestId },
        );
        return { content: [{ type: 'text', text: `elicit ${JSON.stringify(answer)}` }] };
      },
    );
    // Asks without a related request: the v1 server puts it on the standalone GET stream.
    server.registerTool(
      'sample',
      { description: 'Samples on the standalone stream', inputSchema: {} },
      async () => {
        const answer = await server.server.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }],
          maxTokens: 10,
        });
        return { content: [{ type: 'text', text: `sampled ${JSON.stringify(answer.content)}` }] };
      },
    );
    server.registerTool(
      'wait',
      { description: 'Waits until cancelled', inputSchema: {} },
      (_args, extra) =>
        new Promise((resolve) => {
          extra.signal.addEventListener('abort', () => {
            this.cancellations.push(extra.signal.reason);
            resolve({ content: [{ type: 'text', text: 'cancelled' }] });
          });
        }),
    );
    server.registerTool(
      'add_tool',
      { description: 'Registers a tool: list_changed on the GET stream', inputSchema: {} },
      () => {
        server.registerTool('added', { description: 'new', inputSchema: {} }, () => ({
          content: [{ type: 'text', text: 'added' }],
        }));
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    );
    return server;
  }
}

// ---- v1 stateless JSON server ----------------------------------------------------------------

const v1StatelessHandler: NodeHandler = async (req, res, raw) => {
  const server = new V1McpServer({ name: 'v1-stateless', version: '1.32.2' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await transport.handleRequest(req, res, parsedBody(raw));
};

// ---- v2 createMcpHandler server ------------------------------------------------------------

function v2Factory(): V2McpServer {
  const server = new V2McpServer(
    { name: 'v2-test-upstream', version: '2.4.0-test' },
    {
      capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, logging: {} },
      instructions: 'v2 test upstream',
    },
  );
  server.registerTool(
    'echo',
    { description: 'Echo', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'größe',
    { description: 'A name that is not plain ASCII', inputSchema: z.object({}) },
    () => ({ content: [{ type: 'text', text: 'gross' }] }),
  );
  server.registerTool(
    'progress',
    { description: 'Progress and a log message', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1, total: 2 },
        });
        await ctx.mcpReq.notify({
          method: 'notifications/message',
          params: { level: 'info', data: 'halfway' },
        });
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 2, total: 2 },
        });
      }
      return { content: [{ type: 'text', text: `done token=${String(token)}` }] };
    },
  );
  server.registerResource('cfg', 'config://app', { mimeType: 'text/plain' }, (uri: URL) => ({
    contents: [{ uri: uri.href, text: 'cfg=1' }],
  }));
  return server;
}

function v2NodeHandler(legacy: 'stateless' | 'reject'): NodeHandler {
  const handler = createMcpHandler(v2Factory, { legacy });
  return async (req, res, body) => {
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded) abort.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      signal: abort.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (response.body !== null) {
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      } catch {
        // client went away
      }
    }
    res.end();
  };
}

// ---- the suite ---------------------------------------------------------------------------------

const CAPABILITIES = { sampling: {}, elicitation: { form: {} }, roots: {} };
const OPTIONS = { deadlineMillis: 5000 };

function endpoint(url: string, protocol: UpstreamProtocol = 'auto'): UpstreamEndpoint {
  return {
    id: 'test-upstream',
    url,
    protocol,
    connectMillis: 2000,
    maxAnswerBytes: 1024 * 1024,
    clientInfo: { name: 'mcp-gateway-test', version: '0.1.0' },
    clientCapabilities: CAPABILITIES,
  };
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

function text(result: Record<string, unknown>): string {
  return (result.content as Array<{ text: string }>)[0]!.text;
}

async function eventually(check: () => boolean, millis = 3000): Promise<void> {
  const end = Date.now() + millis;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('UpstreamConnection against the official SDK servers', () => {
  let agent: Agent;
  const connections: UpstreamConnection[] = [];
  const servers: TestServer[] = [];

  function connection(url: string, protocol: UpstreamProtocol = 'auto'): UpstreamConnection {
    const c = new UpstreamConnection(endpoint(url, protocol), agent);
    connections.push(c);
    return c;
  }

  async function serve(handler: NodeHandler): Promise<TestServer> {
    const server = await TestServer.start(handler);
    servers.push(server);
    return server;
  }

  beforeAll(() => {
    // the v2 SDK warns about the non-ASCII tool name on every request's fresh instance
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: 2000 } });
  });

  afterEach(async () => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await agent.close();
  });

  describe('v1 session server (2025-11-25, SSE answers)', () => {
    let upstream: V1SessionUpstream;
    let server: TestServer;

    beforeEach(async () => {
      upstream = new V1SessionUpstream();
      server = await serve(upstream.handler);
    });

    afterEach(async () => {
      await upstream.closeAll();
    });

    it('auto: the 2026 probe gets 400 -32000 "No valid session ID", so it falls back to initialize', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      expect(c.era).toBe('2025');
      expect(c.protocolVersion).toBe('2025-11-25');
      expect(c.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.serverInfo).toEqual({ name: 'v1-test-upstream', version: '1.32.2-test' });
      expect(c.serverCapabilities).toHaveProperty('tools');

      const [probe, init, initialized] = seen(server).filter((s) => s.method === 'POST');
      expect(probe!.body).toMatchObject({
        id: 'server-discover-probe-1',
        method: 'server/discover',
      });
      expect(probe!.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(probe!.headers['mcp-method']).toBe('server/discover');
      expect(probe!.body.params._meta).toEqual({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': CAPABILITIES,
        'io.modelcontextprotocol/clientInfo': { name: 'mcp-gateway-test', version: '0.1.0' },
      });
      expect(init!.body).toMatchObject({
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: CAPABILITIES,
          clientInfo: { name: 'mcp-gateway-test', version: '0.1.0' },
        },
      });
      expect(init!.headers['mcp-session-id']).toBeUndefined();
      expect(init!.headers.accept).toBe('application/json, text/event-stream');
      expect(init!.headers['content-type']).toBe('application/json');
      expect(initialized!.body).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(initialized!.headers['mcp-session-id']).toBe(c.sessionId);
      expect(initialized!.headers['mcp-protocol-version']).toBe('2025-11-25');
      // the standalone GET stream is opened after initialize
      await eventually(() => seen(server).some((s) => s.method === 'GET'));
      const get = seen(server).find((s) => s.method === 'GET')!;
      expect(get.headers.accept).toBe('text/event-stream');
      expect(get.headers['mcp-session-id']).toBe(c.sessionId);
    });

    it('connect is idempotent and concurrent callers share one attempt', async () => {
      const c = connection(server.url);
      await Promise.all([c.connect(OPTIONS), c.connect(OPTIONS), c.connect(OPTIONS)]);
      await c.connect(OPTIONS);
      expect(upstream.initializes).toBe(1);
      expect(posts(server, 'server/discover')).toHaveLength(1);
    });

    it('lists and calls tools with the session headers, over SSE answers, with its own ids', async () => {
      const c = connection(server.url);
      const list = await c.request('tools/list', undefined, OPTIONS);
      expect(list.kind).toBe('result');
      const names = ((list as any).result.tools as Array<{ name: string }>).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['echo', 'progress', 'ask', 'sample']));

      const call = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'hällo' } },
        { ...OPTIONS, headers: { authorization: 'Bearer t0k', host: 'evil.example' } },
      );
      expect(call).toEqual({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'hällo' }] },
        // the v1 SDK writes {"result":…,"jsonrpc":"2.0","id":…}: the result's own text comes along
        resultText: '{"content":[{"type":"text","text":"hällo"}]}',
        era: '2025',
      });
      const sent = seen(server)
        .filter((s) => s.body?.method === 'tools/call')
        .at(-1)!;
      expect(sent.headers['mcp-session-id']).toBe(c.sessionId);
      expect(sent.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(sent.headers.authorization).toBe('Bearer t0k');
      expect(sent.headers.host).toBe(`127.0.0.1:${server.port}`);
      expect(sent.headers['mcp-method']).toBeUndefined();
      expect(sent.body.params).toEqual({ name: 'echo', arguments: { text: 'hällo' } });
      const ids = posts(server)
        .filter((b) => typeof b?.id === 'number')
        .map((b) => b.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('delivers progress and log notifications to onMessage in order, then resolves with the result', async () => {
      const c = connection(server.url);
      const messages: JsonRpcMessage[] = [];
      const answer = await c.request(
        'tools/call',
        { name: 'progress', arguments: {}, _meta: { progressToken: 'p-1' } },
        { ...OPTIONS, onMessage: (m) => messages.push(m) },
      );
      expect(answer).toEqual({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'done' }] },
        // the v1 SDK writes {"result":…,"jsonrpc":"2.0","id":…}: the result's own text comes along
        resultText: '{"content":[{"type":"text","text":"done"}]}',
        era: '2025',
      });
      expect(messages.map((m) => m.method)).toEqual([
        'notifications/progress',
        'notifications/message',
        'notifications/progress',
      ]);
      expect(messages[0]!.params).toEqual({ progressToken: 'p-1', progress: 1, total: 2 });
      expect(messages[2]!.params).toEqual({ progressToken: 'p-1', progress: 2, total: 2 });
    });

    it('relays a server->client request on the request stream; respond() answers it on that session', async () => {
      const c = connection(server.url);
      const asked: Array<{ message: JsonRpcMessage; context: UpstreamMessageContext }> = [];
      const answer = await c.request(
        'tools/call',
        { name: 'ask', arguments: { env: 'prod' } },
        {
          ...OPTIONS,
          onMessage: (message, context) => {
            asked.push({ message, context });
            void c.respond(
              {
                jsonrpc: '2.0',
                id: message.id,
                result: { action: 'accept', content: { confirm: true } },
              },
              context.sessionId,
              OPTIONS,
            );
          },
        },
      );
      expect(asked).toHaveLength(1);
      expect(asked[0]!.message).toMatchObject({
        method: 'elicitation/create',
        params: { message: 'Deploy to prod?' },
      });
      expect(asked[0]!.context.sessionId).toBe(c.sessionId);
      expect(answer.kind).toBe('result');
      expect(text((answer as any).result)).toBe(
        'elicit {"action":"accept","content":{"confirm":true}}',
      );
    });

    it('answers a server->client request from the standalone GET stream -32601 at once: it belongs to no caller', async () => {
      const c = connection(server.url);
      const unsolicited: JsonRpcMessage[] = [];
      c.onUnsolicited((message) => unsolicited.push(message));
      await c.connect(OPTIONS);
      await eventually(() => seen(server).some((s) => s.method === 'GET'));
      const answer = await c.request('tools/call', { name: 'sample', arguments: {} }, OPTIONS);
      // the v1 server's createMessage rejects with the gateway's -32601, and its tool says so
      expect(JSON.stringify(answer)).toContain('-32601');
      expect(unsolicited.filter((m) => m.method === 'sampling/createMessage')).toEqual([]);
    });

    it('delivers notifications/tools/list_changed from the GET stream', async () => {
      const c = connection(server.url);
      const unsolicited: JsonRpcMessage[] = [];
      const off = c.onUnsolicited((message) => unsolicited.push(message));
      await c.connect(OPTIONS);
      await eventually(() => seen(server).some((s) => s.method === 'GET'));
      await new Promise((r) => setTimeout(r, 50));
      await c.request('tools/call', { name: 'add_tool', arguments: {} }, OPTIONS);
      await eventually(() =>
        unsolicited.some((m) => m.method === 'notifications/tools/list_changed'),
      );
      off();
    });

    it('re-initializes after a 404 and repeats the request once', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      const first = c.sessionId!;
      upstream.expire(first);
      const answer = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'again' } },
        OPTIONS,
      );
      expect(text((answer as any).result)).toBe('again');
      expect(c.sessionId).toBeDefined();
      expect(c.sessionId).not.toBe(first);
      expect(upstream.initializes).toBe(2);
      // no second probe: the era is remembered
      expect(posts(server, 'server/discover')).toHaveLength(1);
    });

    it('concurrent requests that hit the 404 share one re-initialize', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      upstream.expire(c.sessionId!);
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          c.request('tools/call', { name: 'echo', arguments: { text: `n${n}` } }, OPTIONS),
        ),
      );
      expect(answers.map((a) => text((a as any).result))).toEqual(['n1', 'n2', 'n3', 'n4']);
      expect(upstream.initializes).toBe(2);
    });

    it('fails with session-lost when the request gets 404 again after re-initializing', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      upstream.lose.add('tools/list');
      const failure = await failureOf(c.request('tools/list', undefined, OPTIONS));
      expect(failure.kind).toBe('session-lost');
      expect(upstream.initializes).toBe(2);
    });

    it('abort closes the request and sends notifications/cancelled on the session', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      const abort = new AbortController();
      const pending = c.request(
        'tools/call',
        { name: 'wait', arguments: {} },
        {
          ...OPTIONS,
          signal: abort.signal,
        },
      );
      await eventually(() => posts(server, 'tools/call').length === 1);
      abort.abort('the caller went away');
      const failure = await failureOf(pending);
      expect(failure.kind).toBe('cancelled');
      await eventually(() => upstream.cancellations.length === 1);
      const cancelled = posts(server, 'notifications/cancelled')[0];
      expect(cancelled.params).toEqual({
        requestId: posts(server, 'tools/call')[0].id,
        reason: 'the caller went away',
      });
      const headers = seen(server).find(
        (s) => s.body?.method === 'notifications/cancelled',
      )!.headers;
      expect(headers['mcp-session-id']).toBe(c.sessionId);
    });

    it('close() DELETEs the session and closes the GET stream', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      const id = c.sessionId!;
      await eventually(() => seen(server).some((s) => s.method === 'GET'));
      await c.close();
      const deleted = seen(server).find((s) => s.method === 'DELETE');
      expect(deleted?.headers['mcp-session-id']).toBe(id);
      await eventually(() => !upstream.sessions.has(id));
      expect(c.sessionId).toBeUndefined();
    });

    it('pinned 2026-07-28 fails with era-mismatch', async () => {
      const c = connection(server.url, '2026-07-28');
      const failure = await failureOf(c.connect(OPTIONS));
      expect(failure.kind).toBe('era-mismatch');
      expect(posts(server, 'initialize')).toHaveLength(0);
    });

    it('pinned 2025-11-25 goes straight to initialize', async () => {
      const c = connection(server.url, '2025-11-25');
      await c.connect(OPTIONS);
      expect(c.era).toBe('2025');
      expect(posts(server, 'server/discover')).toHaveLength(0);
    });

    it('a v1 tool error stays a result with isError, as the upstream sent it', async () => {
      const c = connection(server.url);
      const answer = await c.request('tools/call', { name: 'nope', arguments: {} }, OPTIONS);
      expect(answer.kind).toBe('result');
      expect((answer as any).result.isError).toBe(true);
    });
  });

  describe('v1 stateless JSON server', () => {
    it('auto detects 2025 with no session id; requests carry no Mcp-Session-Id', async () => {
      const server = await serve(v1StatelessHandler);
      const c = connection(server.url);
      await c.connect(OPTIONS);
      expect(c.era).toBe('2025');
      expect(c.sessionId).toBeUndefined();
      const answer = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'x' } },
        OPTIONS,
      );
      expect(answer).toEqual({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'x' }] },
        // the v1 SDK writes {"result":…,"jsonrpc":"2.0","id":…}: the result's own text comes along
        resultText: '{"content":[{"type":"text","text":"x"}]}',
        era: '2025',
      });
      const sent = seen(server).find((s) => s.body?.method === 'tools/call')!;
      expect(sent.headers['mcp-session-id']).toBeUndefined();
      expect(sent.headers['mcp-protocol-version']).toBe('2025-11-25');
      const unknown = await c.request('no/such', undefined, OPTIONS);
      // with the era of the server that answered: a code's meaning depends on it (wire notes §5)
      expect(unknown).toEqual({
        kind: 'error',
        code: -32601,
        message: 'Method not found',
        era: '2025',
      });
    });
  });

  describe('v2 createMcpHandler server (2026-07-28)', () => {
    let server: TestServer;

    beforeEach(async () => {
      server = await serve(v2NodeHandler('stateless'));
    });

    it('auto detects 2026 from server/discover', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      expect(c.era).toBe('2026');
      expect(c.protocolVersion).toBe('2026-07-28');
      expect(c.sessionId).toBeUndefined();
      expect(c.serverInfo).toEqual({ name: 'v2-test-upstream', version: '2.4.0-test' });
      expect(c.serverCapabilities).toHaveProperty('tools');
      expect(c.instructions).toBe('v2 test upstream');
      expect(posts(server, 'initialize')).toHaveLength(0);
      expect(seen(server).some((s) => s.method === 'GET')).toBe(false);
    });

    it('tools/list and tools/call pass the server header checks (a mismatch would be -32020)', async () => {
      const c = connection(server.url);
      const list = await c.request('tools/list', undefined, OPTIONS);
      expect(list.kind).toBe('result');
      expect((list as any).result.resultType).toBe('complete');
      const call = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'hi' } },
        OPTIONS,
      );
      expect(call.kind).toBe('result');
      expect(text((call as any).result)).toBe('hi');
      const sent = seen(server).find((s) => s.body?.method === 'tools/call')!;
      expect(sent.headers['mcp-method']).toBe('tools/call');
      expect(sent.headers['mcp-name']).toBe('echo');
      expect(sent.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(sent.body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    });

    it('a tool name that is not plain ASCII goes in Mcp-Name as the base64 sentinel', async () => {
      const c = connection(server.url);
      const call = await c.request('tools/call', { name: 'größe', arguments: {} }, OPTIONS);
      expect(call.kind).toBe('result');
      expect(text((call as any).result)).toBe('gross');
      const sent = seen(server).find((s) => s.body?.params?.name === 'größe')!;
      expect(sent.headers['mcp-name']).toBe(
        `=?base64?${Buffer.from('größe').toString('base64')}?=`,
      );
    });

    it('resources/read sends the uri as Mcp-Name', async () => {
      const c = connection(server.url);
      const read = await c.request('resources/read', { uri: 'config://app' }, OPTIONS);
      expect(read.kind).toBe('result');
      expect((read as any).result.contents[0].text).toBe('cfg=1');
      const sent = seen(server).find((s) => s.body?.method === 'resources/read')!;
      expect(sent.headers['mcp-name']).toBe('config://app');
    });

    it("sends a progress token of its own (the request's id) and relays the progress under the caller's", async () => {
      const c = connection(server.url);
      const messages: JsonRpcMessage[] = [];
      const call = await c.request(
        'tools/call',
        { name: 'progress', arguments: {}, _meta: { progressToken: 7, traceparent: '00-abc' } },
        { ...OPTIONS, onMessage: (m) => messages.push(m) },
      );
      const sent = seen(server).find((s) => s.body?.params?.name === 'progress')!;
      // the caller's other _meta keys go as they came
      expect(sent.body.params._meta).toMatchObject({
        progressToken: sent.body.id,
        traceparent: '00-abc',
      });
      expect(text((call as any).result)).toBe(`done token=${String(sent.body.id)}`);
      expect(messages.map((m) => m.method)).toEqual([
        'notifications/progress',
        'notifications/message',
        'notifications/progress',
      ]);
      expect(messages[0]!.params).toEqual({ progressToken: 7, progress: 1, total: 2 });
      expect(messages[2]!.params).toEqual({ progressToken: 7, progress: 2, total: 2 });
    });

    it('unknown tool: the JSON-RPC error comes back unchanged', async () => {
      const c = connection(server.url);
      const answer = await c.request('tools/call', { name: 'nope', arguments: {} }, OPTIONS);
      expect(answer).toEqual({
        kind: 'error',
        code: -32602,
        message: 'Tool nope not found',
        era: '2026',
      });
    });

    it('unknown method: 404 -32601 is an error answer, not a failure', async () => {
      const c = connection(server.url);
      const answer = await c.request('no/such', undefined, OPTIONS);
      expect(answer).toMatchObject({ kind: 'error', code: -32601 });
    });

    it('notify is accepted (202) with the envelope', async () => {
      const c = connection(server.url);
      await c.notify('notifications/cancelled', { requestId: 99, reason: 'test' }, OPTIONS);
      const sent = seen(server).find((s) => s.body?.method === 'notifications/cancelled')!;
      expect(sent.body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    });

    it('respond is refused in 2026', async () => {
      const c = connection(server.url);
      await c.connect(OPTIONS);
      const failure = await failureOf(
        c.respond({ jsonrpc: '2.0', id: 1, result: {} }, undefined, OPTIONS),
      );
      expect(failure.kind).toBe('era-mismatch');
    });

    it('pinned 2025-11-25 uses its stateless legacy fallback: no session id, GET 405 = no stream', async () => {
      const c = connection(server.url, '2025-11-25');
      await c.connect(OPTIONS);
      expect(c.era).toBe('2025');
      expect(c.sessionId).toBeUndefined();
      await eventually(() => seen(server).some((s) => s.method === 'GET'));
      const call = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'old' } },
        OPTIONS,
      );
      expect(text((call as any).result)).toBe('old');
      await new Promise((r) => setTimeout(r, 400));
      expect(seen(server).filter((s) => s.method === 'GET')).toHaveLength(1);
    });

    it('abort closes the 2026 SSE stream (the cancel signal)', async () => {
      let closed = false;
      const slow = await serve((req, res, raw) => {
        const body: any = parsedBody(raw);
        if (body?.method === 'server/discover') {
          return v2NodeHandler('stateless')(req, res, raw);
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`,
        );
        res.on('close', () => {
          closed = true;
        });
        return undefined;
      });
      const c = connection(slow.url);
      const abort = new AbortController();
      const got: JsonRpcMessage[] = [];
      const pending = c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'x' } },
        {
          ...OPTIONS,
          signal: abort.signal,
          onMessage: (m) => {
            got.push(m);
            abort.abort();
          },
        },
      );
      const failure = await failureOf(pending);
      expect(failure.kind).toBe('cancelled');
      expect(got).toHaveLength(1);
      await eventually(() => closed);
    });
  });

  describe('era changes under a remembered era', () => {
    it('2025 → 2026: a 2025 request answered -32022 re-probes and repeats the request as 2026', async () => {
      const upstream = new V1SessionUpstream();
      const server = await serve(upstream.handler);
      const c = connection(server.url);
      await c.connect(OPTIONS);
      expect(c.era).toBe('2025');
      server.handler = v2NodeHandler('reject');
      const answer = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'new' } },
        OPTIONS,
      );
      expect(text((answer as any).result)).toBe('new');
      expect(c.era).toBe('2026');
      expect(posts(server, 'server/discover')).toHaveLength(2);
      await upstream.closeAll();
    });

    it('2026 → 2025: a 2026 request answered 400 -32000 re-probes, initializes, and repeats', async () => {
      const server = await serve(v2NodeHandler('stateless'));
      const c = connection(server.url);
      await c.connect(OPTIONS);
      expect(c.era).toBe('2026');
      const upstream = new V1SessionUpstream();
      server.handler = upstream.handler;
      const answer = await c.request(
        'tools/call',
        { name: 'echo', arguments: { text: 'old' } },
        OPTIONS,
      );
      expect(text((answer as any).result)).toBe('old');
      expect(c.era).toBe('2025');
      expect(c.sessionId).toBeDefined();
      expect(upstream.initializes).toBe(1);
      await upstream.closeAll();
    });

    it('a v2 reject-legacy endpoint refuses a pinned 2025 initialize: era-mismatch', async () => {
      const server = await serve(v2NodeHandler('reject'));
      const c = connection(server.url, '2025-11-25');
      const failure = await failureOf(c.connect(OPTIONS));
      expect(failure.kind).toBe('era-mismatch');
    });
  });
});
