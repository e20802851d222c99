import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { listenOnStablePort } from './ports';

/**
 * A small upstream MCP server on raw node:http whose answers each test scripts
 * (docs/operations.md §10): stateless 2025 by default (initialize, no session, GET 405), optionally
 * with an upstream session id, a GET stream, or the stateless 2026-07-28 way (server/discover,
 * envelope and header checks). It serves `tools`, `resources`, `resourceTemplates` and `prompts` in
 * pages of `pageSize` (cursor = offset as a string), answers tools/call from `onTool` handlers, and
 * lets a test replace the answer to any JSON-RPC method with `on(method, handler)`: slow
 * answers, garbage, 5xx, SSE framings, chunked bytes. Every HTTP request is recorded.
 */

/** One HTTP request the upstream received, as it arrived. */
export interface ReceivedRequest {
  /** GET, POST, DELETE. */
  readonly httpMethod: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Raw body bytes. */
  readonly body: Buffer;
  /** The parsed JSON body; undefined when empty or not JSON. */
  readonly message?: Record<string, any>;
  /** The JSON-RPC method; undefined for a response, GET or DELETE. */
  readonly method?: string;
  readonly id?: string | number;
  readonly params?: Record<string, any>;
  readonly at: number;
}

/** What the upstream answers to one request. Without `raw`, a JSON-RPC response to its id. */
export interface Reply {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** The JSON-RPC result. */
  readonly result?: unknown;
  /** The JSON-RPC error (wins over `result`). */
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
  /** Frame the answer as SSE (`event: message`), after `events`. */
  readonly sse?: boolean;
  /** JSON-RPC messages sent on the SSE answer before the response (implies `sse`). */
  readonly events?: readonly unknown[];
  /** Wait between SSE events, ms. */
  readonly eventGapMs?: number;
  /** Exact bytes instead of a JSON-RPC response; an array is written chunk by chunk. */
  readonly raw?: string | Buffer | readonly (string | Buffer)[];
  /** Wait between `raw` chunks, ms. */
  readonly chunkGapMs?: number;
  /** Wait this long before the answer's head. */
  readonly delayMs?: number;
  /** Never answer (the socket stays open until the client gives up or the server stops). */
  readonly hang?: boolean;
  /** Read the request, then reset the connection (TCP RST) before any answer: it may have run. */
  readonly reset?: boolean;
}

export type Handler = (
  req: ReceivedRequest,
) => Reply | undefined | void | Promise<Reply | undefined | void>;

export interface ScriptedUpstreamOptions {
  readonly tools?: readonly unknown[];
  readonly resources?: readonly unknown[];
  readonly resourceTemplates?: readonly unknown[];
  readonly prompts?: readonly unknown[];
  /** Server capabilities; default: tools (listChanged), plus resources/prompts when given. */
  readonly capabilities?: Record<string, unknown>;
  /** Items per list page; default: every item in one page. */
  readonly pageSize?: number;
  /** `2025` (initialize) or `2026` (stateless: server/discover, envelope, header checks). */
  readonly era?: '2025' | '2026';
  /** 2025: the version initialize answers (default 2025-11-25). */
  readonly protocolVersion?: string;
  /** 2025: 400 for a request whose MCP-Protocol-Version is not the negotiated version. */
  readonly strictVersion?: boolean;
  /** 2025: the Mcp-Session-Id issued at initialize; later requests without it get 404. */
  readonly sessionId?: string;
  /** 2025: GET opens an SSE stream (`push` writes to it); default: 405. */
  readonly getStream?: boolean;
  /** 406 for a POST whose Accept lacks application/json or text/event-stream (SDK behaviour). */
  readonly requireAccept?: boolean;
}

const LIST_KEYS: Readonly<Record<string, 'tools' | 'resources' | 'resourceTemplates' | 'prompts'>> =
  {
    'tools/list': 'tools',
    'resources/list': 'resources',
    'resources/templates/list': 'resourceTemplates',
    'prompts/list': 'prompts',
  };
const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const NAMED = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
]);

/** A wait that does not keep the test process alive on its own. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export class ScriptedUpstream {
  readonly requests: ReceivedRequest[] = [];
  tools: unknown[];
  resources: unknown[];
  resourceTemplates: unknown[];
  prompts: unknown[];
  capabilities: Record<string, unknown>;
  pageSize: number | undefined;
  sessionId: string | undefined;
  /** When set, every GET is answered with this status and an empty body instead. */
  getStatus: number | undefined;
  private readonly handlers = new Map<string, Handler>();
  private readonly toolHandlers = new Map<string, Handler>();
  private readonly streams = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private boundPort = 0;

  constructor(readonly options: ScriptedUpstreamOptions = {}) {
    this.tools = [...(options.tools ?? [])];
    this.resources = [...(options.resources ?? [])];
    this.resourceTemplates = [...(options.resourceTemplates ?? [])];
    this.prompts = [...(options.prompts ?? [])];
    this.capabilities = options.capabilities ?? {
      tools: { listChanged: true },
      ...(options.resources || options.resourceTemplates ? { resources: {} } : {}),
      ...(options.prompts ? { prompts: {} } : {}),
    };
    this.pageSize = options.pageSize;
    this.sessionId = options.sessionId;
  }

  static async start(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
    const upstream = new ScriptedUpstream(options);
    await upstream.listen();
    return upstream;
  }

  /** An upstream that is down: its port is known and refuses connections until `listen()`. */
  static async down(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
    const upstream = await ScriptedUpstream.start(options);
    await upstream.stop();
    return upstream;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}/mcp`;
  }

  /** Replaces the answer to a JSON-RPC method; a handler returning undefined falls back to the default. */
  on(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }

  off(method: string): this {
    this.handlers.delete(method);
    return this;
  }

  /** The answer to tools/call of one tool (default: a text block naming the tool and its arguments). */
  onTool(name: string, handler: Handler): this {
    this.toolHandlers.set(name, handler);
    return this;
  }

  /** The JSON-RPC requests and notifications received, optionally of one method. */
  rpcs(method?: string): ReceivedRequest[] {
    return this.requests.filter(
      (r) => r.method !== undefined && (method === undefined || r.method === method),
    );
  }

  /** tools/call requests received, optionally for one original tool name. */
  calls(name?: string): ReceivedRequest[] {
    return this.rpcs('tools/call').filter((r) => name === undefined || r.params?.name === name);
  }

  /** Sends a message on every open GET stream; resolves with how many streams got it. */
  push(message: unknown): number {
    for (const res of this.streams)
      res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return this.streams.size;
  }

  /** Writes these exact bytes on every open GET stream; resolves with how many streams got them. */
  pushRaw(bytes: string): number {
    for (const res of this.streams) res.write(bytes);
    return this.streams.size;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Listens again on its port; the first time, on a port that stays its own (support/ports.ts). */
  async listen(port = this.boundPort): Promise<void> {
    if (port === 0) {
      await listenOnStablePort((p) => this.listen(p));
      return;
    }
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection (the upstream is "down"). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.streams.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let message: Record<string, any> | undefined;
    try {
      const parsed: unknown = body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        message = parsed as Record<string, any>;
    } catch {
      message = undefined;
    }
    const received: ReceivedRequest = {
      httpMethod: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      message,
      method: typeof message?.method === 'string' ? message.method : undefined,
      id: message?.id as string | number | undefined,
      params: message?.params as Record<string, any> | undefined,
      at: Date.now(),
    };
    this.requests.push(received);
    if (received.httpMethod === 'GET') return this.openStream(received, res);
    if (received.httpMethod !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const refused = this.transportCheck(received);
    if (refused !== undefined) return this.send(received, res, refused);
    if (received.method === undefined || received.id === undefined) {
      // a notification, or a response to a request of ours
      return void res.writeHead(202).end();
    }
    const scripted = await this.handlers.get(received.method)?.(received);
    await this.send(received, res, scripted ?? (await this.defaultReply(received)));
  }

  /** Transport rules: Accept, session, version header (2025); envelope and mirrored headers (2026). */
  private transportCheck(req: ReceivedRequest): Reply | undefined {
    const accept = String(req.headers.accept ?? '');
    if (
      this.options.requireAccept &&
      !(accept.includes('application/json') && accept.includes('text/event-stream'))
    )
      return { status: 406, error: { code: -32000, message: 'Not Acceptable' } };
    if (req.message === undefined)
      return { status: 400, error: { code: -32700, message: 'Parse error' } };
    if (this.options.era === '2026') return this.modernCheck(req);
    if (req.method === 'initialize') return undefined;
    if (this.sessionId !== undefined && req.headers['mcp-session-id'] !== this.sessionId)
      return { status: 404, error: { code: -32001, message: 'Session not found' } };
    const version = this.options.protocolVersion ?? '2025-11-25';
    if (this.options.strictVersion && req.headers['mcp-protocol-version'] !== version)
      return {
        status: 400,
        error: { code: -32000, message: `Bad Request: protocol version must be ${version}` },
      };
    return undefined;
  }

  private modernCheck(req: ReceivedRequest): Reply | undefined {
    const mismatch = (what: string): Reply => ({
      status: 400,
      error: { code: -32020, message: `Header mismatch: ${what}` },
    });
    const envelope = req.params?._meta?.[META_VERSION];
    if (req.method === 'initialize')
      return {
        status: 400,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: [MODERN], requested: req.params?.protocolVersion },
        },
      };
    if (envelope !== MODERN || req.headers['mcp-protocol-version'] !== MODERN)
      return mismatch('MCP-Protocol-Version');
    if (req.id === undefined) return undefined;
    if (req.headers['mcp-method'] !== req.method) return mismatch('Mcp-Method');
    const named = req.method === undefined ? undefined : NAMED.get(req.method);
    if (named !== undefined && req.headers['mcp-name'] !== req.params?.[named])
      return mismatch('Mcp-Name');
    return undefined;
  }

  private async defaultReply(req: ReceivedRequest): Promise<Reply> {
    const method = req.method ?? '';
    const modern = this.options.era === '2026';
    if (method === 'server/discover') {
      if (!modern) return { error: { code: -32601, message: 'Method not found' } };
      return {
        result: {
          resultType: 'complete',
          supportedVersions: [MODERN],
          capabilities: this.capabilities,
          ttlMs: 0,
          cacheScope: 'private',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'scripted', version: '1' } },
        },
      };
    }
    if (method === 'initialize') {
      return {
        result: {
          protocolVersion: this.options.protocolVersion ?? '2025-11-25',
          capabilities: this.capabilities,
          serverInfo: { name: 'scripted', version: '1' },
        },
        headers: this.sessionId === undefined ? {} : { 'mcp-session-id': this.sessionId },
      };
    }
    if (method === 'ping') return { result: {} };
    const listKey = LIST_KEYS[method];
    if (listKey !== undefined) return this.page(listKey, req.params?.cursor);
    if (method === 'tools/call') {
      const name = String(req.params?.name);
      const scripted = await this.toolHandlers.get(name)?.(req);
      if (scripted) return scripted;
      const args: unknown = req.params?.arguments ?? {};
      return {
        result: {
          content: [{ type: 'text', text: JSON.stringify({ tool: name, arguments: args }) }],
          ...(modern ? { resultType: 'complete' } : {}),
        },
      };
    }
    return { status: modern ? 404 : 200, error: { code: -32601, message: 'Method not found' } };
  }

  private page(
    key: 'tools' | 'resources' | 'resourceTemplates' | 'prompts',
    cursor: unknown,
  ): Reply {
    const items = this[key];
    const size = this.pageSize ?? Math.max(1, items.length);
    let start = 0;
    if (cursor !== undefined) {
      start = typeof cursor === 'string' && /^\d+$/.test(cursor) ? Number(cursor) : -1;
      if (start < 0 || start >= items.length)
        return { error: { code: -32602, message: `Invalid cursor: ${JSON.stringify(cursor)}` } };
    }
    const end = start + size;
    return {
      result: {
        [key]: items.slice(start, end),
        ...(end < items.length ? { nextCursor: String(end) } : {}),
        ...(this.options.era === '2026' ? { resultType: 'complete' } : {}),
      },
    };
  }

  private openStream(req: ReceivedRequest, res: ServerResponse): void {
    if (this.getStatus !== undefined) {
      res.writeHead(this.getStatus).end();
      return;
    }
    if (!this.options.getStream) {
      res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
      res.end(
        '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}',
      );
      return;
    }
    if (this.sessionId !== undefined && req.headers['mcp-session-id'] !== this.sessionId) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    this.streams.add(res);
    res.once('close', () => this.streams.delete(res));
  }

  private async send(req: ReceivedRequest, res: ServerResponse, reply: Reply): Promise<void> {
    if (reply.hang) return;
    if (reply.reset) {
      res.socket?.resetAndDestroy();
      return;
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if (reply.raw !== undefined) {
      res.writeHead(reply.status ?? 200, { ...reply.headers });
      const chunks = Array.isArray(reply.raw) ? reply.raw : [reply.raw as string | Buffer];
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0 && reply.chunkGapMs) await sleep(reply.chunkGapMs);
        if (res.destroyed) return;
        res.write(chunk);
      }
      res.end();
      return;
    }
    const response = JSON.stringify({
      jsonrpc: '2.0',
      id: req.id ?? null,
      ...(reply.error !== undefined ? { error: reply.error } : { result: reply.result ?? {} }),
    });
    if (reply.sse || reply.events !== undefined) {
      res.writeHead(reply.status ?? 200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        ...reply.headers,
      });
      res.flushHeaders();
      for (const event of reply.events ?? []) {
        if (res.destroyed) return;
        res.write(`event: message\ndata: ${JSON.stringify(event)}\n\n`);
        if (reply.eventGapMs) await sleep(reply.eventGapMs);
      }
      if (!res.destroyed) res.end(`event: message\ndata: ${response}\n\n`);
      return;
    }
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    res.end(response);
  }
}

/** An upstream tool: `description` carries a `[marker:<name>]` as the field cases ask. */
export function upTool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    description: `[marker:${name}] a scripted upstream tool`,
    inputSchema: { type: 'object', properties: {} },
    ...extra,
  };
}
