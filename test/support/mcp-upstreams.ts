import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  McpServer as V1McpServer,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import {
  ErrorCode,
  McpError,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import {
  McpServer as V2McpServer,
  createMcpHandler,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

/** One HTTP request an upstream received: its HTTP method, JSON-RPC method (if any) and body. */
export interface UpstreamRequest {
  readonly httpMethod: string;
  /** The JSON-RPC `method` of a request or notification; undefined for a response or a GET/DELETE. */
  readonly rpcMethod?: string;
  readonly headers: IncomingMessage['headers'];
  readonly body?: unknown;
  /** The HTTP status the server answered with (set once answered). */
  status?: number;
}

/** 1x1 transparent PNG: the image content of `render`. */
export const PIXEL_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const README_TEXT = '# repo\nThe v1 test upstream.';
const FILE_NAMES = ['src/index.ts', 'src/main.ts', 'README.md'];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function rpcMethodOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const method = (body as { method?: unknown }).method;
  return typeof method === 'string' ? method : undefined;
}

/** A node:http server on 127.0.0.1 with an ephemeral port that keeps track of its sockets. */
/** Where a test upstream listens (an interface address, a port shared with another server). */
export interface UpstreamBind {
  readonly host?: string;
  readonly port?: number;
}

abstract class HttpUpstream {
  readonly requests: UpstreamRequest[] = [];
  protected server?: Server;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;
  private boundHost = '127.0.0.1';

  get port(): number {
    return this.boundPort;
  }

  /** The MCP endpoint. */
  get url(): string {
    return `http://${this.boundHost}:${this.boundPort}/mcp`;
  }

  /** Requests that carried this JSON-RPC method. */
  requestsFor(rpcMethod: string): UpstreamRequest[] {
    return this.requests.filter((r) => r.rpcMethod === rpcMethod);
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  /** @param bind where to listen: 127.0.0.1 on an ephemeral port unless given */
  protected async listen(bind: UpstreamBind = {}): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(err instanceof Error ? err.message : String(err));
        } else {
          res.destroy();
        }
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    const host = bind.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(bind.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.boundHost = host;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  protected record(req: IncomingMessage, res: ServerResponse, body?: unknown): UpstreamRequest {
    const entry: UpstreamRequest = {
      httpMethod: req.method ?? '',
      rpcMethod: rpcMethodOf(body),
      headers: req.headers,
      body,
    };
    this.requests.push(entry);
    res.on('finish', () => (entry.status = res.statusCode));
    return entry;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }
}

/** What the v1 upstream's tools saw, for the tests to check. */
export interface V1Observations {
  /** Arguments `repo.search` was called with, as the server parsed them. */
  readonly searches: unknown[];
  /** Answers `confirm` got to its elicitation/create. */
  readonly elicitations: unknown[];
}

/**
 * A real MCP server built with the v1 SDK (`@modelcontextprotocol/sdk`: McpServer +
 * StreamableHTTPServerTransport) on 127.0.0.1, 2025 era, stateful: one session per
 * `initialize` (Mcp-Session-Id from a sessionIdGenerator), answers over SSE, a standalone GET
 * stream, DELETE. `expireSessions()` forgets every session, so the next request on one is
 * answered 404 and the client must initialize again.
 *
 * Tools: `repo.search` (dotted name; echoes its arguments), `long-task` (notifications/progress
 * for the caller's progressToken and notifications/message, then a result), `confirm`
 * (elicitation/create through the server API, returns the client's answer), `needs-login`
 * (a JSON-RPC error -32042 with data), `flaky` (an isError result), `render` (image +
 * text content with structuredContent and an outputSchema). Resource `repo://readme`, template
 * `repo://files/{path}` with completion, prompt `review` (file: completable, focus: optional).
 * Capabilities: tools, resources, prompts, completions, logging.
 */
/** MCP's log levels, least severe first (MCP 2025-11-25 "Logging"). */
const LOG_SEVERITY = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

export class V1Upstream extends HttpUpstream {
  /** Live sessions by Mcp-Session-Id. */
  private readonly sessions = new Map<
    string,
    { transport: StreamableHTTPServerTransport; server: V1McpServer }
  >();
  /** Every session id this server ever issued, in order. */
  readonly issuedSessions: string[] = [];
  readonly seen: V1Observations = { searches: [], elicitations: [] };
  /** Servers of forgotten sessions (forgetSessions), closed at stop. */
  private readonly forgotten: { close(): Promise<void> }[] = [];

  /**
   * Resumable (`resumable: true`): sessions keep their events in the SDK's in-memory event
   * store and send `retry: 200`, and the tool `poll-task` closes its call's stream midway
   * (SSE polling, SEP-1699): progress 1/2, `closeSSEStream()`, 600 ms later progress 2/2 and
   * the result "done 7", which a client gets by resuming with GET and Last-Event-ID.
   */
  private resumable = false;
  /**
   * Subscribable (`subscribable: true`): declares `resources.subscribe`, answers
   * resources/subscribe and unsubscribe, and `notifyResourceUpdated` sends
   * notifications/resources/updated on the standalone GET stream of every session subscribed
   * to the URI.
   */
  private subscribable = false;
  /**
   * Leveled (`leveled: true`): logging/setLevel is remembered per session (`logLevels`,
   * `setLevels`), and the tool `log-levels` sends a notifications/message at debug, info and
   * error on its own stream, those at or above its session's level (as the SDK's
   * sendLoggingMessage filters; none set: all).
   */
  private leveled = false;
  /** Per session id, the URIs it is subscribed to (subscribable). */
  readonly subscriptions = new Map<string, Set<string>>();
  /** Per session id, the level its last logging/setLevel set (the tool `log-levels` honours it). */
  readonly logLevels = new Map<string, string>();
  /** Every logging/setLevel received, in order: its level and the Authorization it carried. */
  readonly setLevels: { readonly level: string; readonly authorization?: string }[] = [];

  static async start(
    bind: UpstreamBind = {},
    options: {
      readonly resumable?: boolean;
      readonly subscribable?: boolean;
      readonly leveled?: boolean;
    } = {},
  ): Promise<V1Upstream> {
    const upstream = new V1Upstream();
    upstream.resumable = options.resumable === true;
    upstream.subscribable = options.subscribable === true;
    upstream.leveled = options.leveled === true;
    await upstream.listen(bind);
    return upstream;
  }

  get liveSessions(): number {
    return this.sessions.size;
  }

  /** Sends notifications/resources/updated to every session subscribed to `uri`. */
  async notifyResourceUpdated(uri: string): Promise<void> {
    for (const [id, uris] of this.subscriptions) {
      if (uris.has(uri)) await this.sessions.get(id)?.server.server.sendResourceUpdated({ uri });
    }
  }

  /**
   * Forgets every session (closing their transports and open streams): a request that
   * carries one of their ids is answered 404 from now on.
   */
  async expireSessions(): Promise<void> {
    const live = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(live.map(({ server }) => server.close()));
  }

  /**
   * Forgets every session without closing anything: a request that carries one of their ids is
   * answered 404 from now on, while the streams already open (a call waiting on its client's
   * answer) stay open, as on a second upstream replica that never had the session.
   */
  forgetSessions(): void {
    for (const session of this.sessions.values()) this.forgotten.push(session.server);
    this.sessions.clear();
  }

  override async stop(): Promise<void> {
    await this.expireSessions();
    await Promise.all(this.forgotten.splice(0).map((server) => server.close()));
    await super.stop();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.method === 'POST' ? await readBody(req) : undefined;
    let body: unknown;
    if (raw !== undefined && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
    }
    this.record(req, res, body);
    const header = req.headers['mcp-session-id'];
    const sessionId = typeof header === 'string' ? header : undefined;
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (session === undefined) {
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
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const server = this.buildServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(this.resumable && { eventStore: new InMemoryEventStore(), retryInterval: 200 }),
        onsessioninitialized: (id) => {
          this.sessions.set(id, { transport, server });
          this.issuedSessions.push(id);
        },
        onsessionclosed: (id) => {
          this.sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Bad Request: no session; initialize first' },
        id: null,
      }),
    );
  }

  /** `leveled`: logging/setLevel remembered per session, and the tool `log-levels`. */
  private addLogLevels(server: V1McpServer): void {
    // as the SDK's own handler, but remembered where the tests (and `log-levels`) can read it
    server.server.setRequestHandler(SetLevelRequestSchema, (request, extra) => {
      this.logLevels.set(extra.sessionId ?? '', request.params.level);
      const authorization = extra.requestInfo?.headers.authorization;
      this.setLevels.push({
        level: request.params.level,
        ...(typeof authorization === 'string' && { authorization }),
      });
      return {};
    });
    server.registerTool(
      'log-levels',
      {
        description:
          'Sends notifications/message at debug, info and error on its own stream, those its session asked for (logging/setLevel; none set: all)',
        inputSchema: {},
      },
      async (_args, extra) => {
        const floor = LOG_SEVERITY.indexOf(this.logLevels.get(extra.sessionId ?? '') ?? 'debug');
        for (const level of ['debug', 'info', 'error'] as const)
          if (LOG_SEVERITY.indexOf(level) >= floor)
            await extra.sendNotification({
              method: 'notifications/message',
              params: { level, logger: 'log-levels', data: `a ${level} line` },
            });
        return { content: [{ type: 'text', text: 'logged' }] };
      },
    );
  }

  private buildServer(): V1McpServer {
    const server = new V1McpServer(
      { name: 'repo-upstream-v1', version: '1.0.0' },
      { capabilities: { logging: {} } },
    );

    server.registerTool(
      'repo.search',
      {
        title: 'Search the repository',
        description: 'Full-text search over the repository',
        inputSchema: {
          query: z.string().min(1).describe('What to look for'),
          limit: z.number().int().min(1).max(50).optional(),
        },
        annotations: { readOnlyHint: true },
      },
      (args) => {
        this.seen.searches.push(args);
        return {
          content: [{ type: 'text', text: JSON.stringify({ echo: args, hits: 2 }) }],
        };
      },
    );

    if (this.leveled) this.addLogLevels(server);

    if (this.subscribable) {
      server.server.registerCapabilities({ resources: { subscribe: true } });
      server.server.setRequestHandler(SubscribeRequestSchema, (request, extra) => {
        const id = extra.sessionId ?? '';
        const uris = this.subscriptions.get(id) ?? new Set<string>();
        uris.add(request.params.uri);
        this.subscriptions.set(id, uris);
        return {};
      });
      server.server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) => {
        this.subscriptions.get(extra.sessionId ?? '')?.delete(request.params.uri);
        return {};
      });
    }

    if (this.resumable) {
      server.registerTool(
        'poll-task',
        {
          description: 'Closes its stream midway; the rest comes on the resumed stream',
          inputSchema: {},
        },
        async (_args, extra) => {
          const progressToken = extra._meta?.progressToken;
          const progress = async (step: number): Promise<void> => {
            if (progressToken === undefined) return;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: step, total: 2 },
            });
          };
          await progress(1);
          extra.closeSSEStream?.();
          await new Promise((resolve) => setTimeout(resolve, 600));
          await progress(2);
          return { content: [{ type: 'text', text: 'done 7' }] };
        },
      );
    }

    server.registerTool(
      'long-task',
      {
        description: 'Reports progress and log messages, then finishes',
        inputSchema: { steps: z.number().int().min(1).max(10) },
      },
      async ({ steps }, extra) => {
        const progressToken = extra._meta?.progressToken;
        for (let step = 1; step <= steps; step++) {
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: step, total: steps, message: `step ${step}` },
            });
          }
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', logger: 'long-task', data: `finished step ${step}` },
          });
        }
        return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
      },
    );

    server.registerTool(
      'confirm',
      {
        description: 'Asks the user (elicitation/create) and returns the answer',
        inputSchema: { question: z.string() },
      },
      async ({ question }, extra) => {
        const answer = await server.server.elicitInput(
          {
            mode: 'form',
            message: question,
            requestedSchema: {
              type: 'object',
              properties: {
                approve: { type: 'boolean', title: 'Approve?' },
                note: { type: 'string' },
              },
              required: ['approve'],
            },
          },
          { relatedRequestId: extra.requestId },
        );
        this.seen.elicitations.push(answer);
        return {
          content: [{ type: 'text', text: JSON.stringify(answer) }],
          structuredContent: { action: answer.action, content: answer.content ?? null },
        };
      },
    );

    server.registerTool(
      'needs-login',
      { description: 'Always answers with a JSON-RPC error (-32042, URL elicitation required)' },
      () => {
        throw new McpError(ErrorCode.UrlElicitationRequired, 'Sign-in required first', {
          elicitations: [
            {
              mode: 'url',
              elicitationId: 'login-1',
              url: 'https://auth.example.com/login',
              message: 'Sign in to the repository',
            },
          ],
        });
      },
    );

    server.registerTool('flaky', { description: 'Always fails as a tool (isError)' }, () => ({
      content: [{ type: 'text', text: 'backend on fire' }],
      isError: true,
    }));

    server.registerTool(
      'render',
      {
        description: 'Renders a 1x1 image',
        inputSchema: { color: z.enum(['red', 'blue']) },
        outputSchema: { width: z.number(), height: z.number(), color: z.string() },
      },
      ({ color }) => ({
        content: [
          { type: 'image', data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
          { type: 'text', text: `a ${color} pixel` },
        ],
        structuredContent: { width: 1, height: 1, color },
        _meta: { 'example.com/renderer': 'v1' },
      }),
    );

    server.registerResource(
      'readme',
      'repo://readme',
      { title: 'README', description: 'The repository README', mimeType: 'text/markdown' },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: README_TEXT }] }),
    );

    server.registerResource(
      'file',
      new ResourceTemplate('repo://files/{path}', {
        list: undefined,
        complete: {
          path: (value) => FILE_NAMES.filter((name) => name.startsWith(value)),
        },
      }),
      { description: 'A file of the repository', mimeType: 'text/plain' },
      (uri, variables) => ({
        contents: [
          { uri: uri.href, mimeType: 'text/plain', text: `contents of ${String(variables.path)}` },
        ],
      }),
    );

    server.registerPrompt(
      'review',
      {
        title: 'Review a file',
        description: 'Asks for a code review of one file',
        argsSchema: {
          file: completable(z.string(), (value) =>
            FILE_NAMES.filter((name) => name.startsWith(value)),
          ),
          focus: z.string().optional(),
        },
      },
      ({ file, focus }) => ({
        description: `Review of ${file}`,
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: `Please review ${file}${focus === undefined ? '' : ` with a focus on ${focus}`}.`,
            },
          },
        ],
      }),
    );
    return server;
  }
}

/** How a V2Upstream is built. */
export interface V2UpstreamOptions {
  /** The server's `cacheHints` per list method (ttlMs in ms, cacheScope), as the SDK takes them. */
  readonly cacheHints?: ServerOptions['cacheHints'];
  /**
   * `'stateless'`: also serves 2025-11-25 requests on the same URL (a dual-era server, as the
   * official conformance reference server is); default `'reject'`: 2026-07-28 only.
   */
  readonly legacy?: 'stateless' | 'reject';
}

/**
 * A real MCP server built with the v2 SDK (`@modelcontextprotocol/server`, `createMcpHandler`)
 * on 127.0.0.1: stateless, 2026-07-28 only (`legacy: 'reject'`), a fresh McpServer per
 * request, served over node:http through the handler's web-standard `fetch` face.
 *
 * Tools: `add` (numbers → text + structuredContent, with an outputSchema) and `shout`
 * (upper-cases its text); resource `calc://constants/pi`.
 */
export class V2Upstream extends HttpUpstream {
  private readonly handler: ReturnType<typeof createMcpHandler>;

  private constructor(options: V2UpstreamOptions) {
    super();
    this.handler = createMcpHandler(() => V2Upstream.buildServer(options), {
      legacy: options.legacy ?? 'reject',
    });
  }

  static async start(options: V2UpstreamOptions = {}): Promise<V2Upstream> {
    const upstream = new V2Upstream(options);
    await upstream.listen();
    return upstream;
  }

  override async stop(): Promise<void> {
    await this.handler.close();
    await super.stop();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.method === 'POST' ? await readBody(req) : undefined;
    let body: unknown;
    try {
      body = raw === undefined || raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    this.record(req, res, body);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    }
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    const response = await this.handler.fetch(
      new Request(`http://127.0.0.1:${this.port}${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: raw === undefined ? undefined : new Uint8Array(raw),
        signal: aborted.signal,
      }),
    );
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out);
    if (response.body !== null) {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
        res.write(chunk);
    }
    res.end();
  }

  private static buildServer(options: V2UpstreamOptions): V2McpServer {
    const server = new V2McpServer(
      { name: 'calc-upstream-v2', version: '2.0.0' },
      options.cacheHints === undefined ? {} : { cacheHints: options.cacheHints },
    );
    server.registerTool(
      'add',
      {
        description: 'Adds two numbers',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ sum: z.number() }),
      },
      ({ a, b }) => ({
        content: [{ type: 'text', text: String(a + b) }],
        structuredContent: { sum: a + b },
      }),
    );
    server.registerTool(
      'shout',
      {
        description: 'Upper-cases a text',
        inputSchema: z.object({ text: z.string() }),
      },
      ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
    );
    server.registerResource(
      'pi',
      'calc://constants/pi',
      { description: 'The constant pi', mimeType: 'text/plain' },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: '3.14159' }] }),
    );
    return server;
  }
}
