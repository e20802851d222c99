import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** One request a live upstream served: its JSON-RPC method, caller header, and when it ran. */
export interface LiveRequest {
  readonly rpcMethod?: string;
  /** The `x-tenant` header the gateway forwarded, if any. */
  readonly tenant?: string;
  /** performance.now() when the request arrived and when its answer ended (this process's clock). */
  readonly startedAt: number;
  endedAt?: number;
}

/** What a live upstream lists: per caller (the `x-tenant` header), so the lists differ by caller. */
export interface LiveUpstreamOptions {
  /** Server name; also the stem of its tools: `<tenant>_<stem>` and `<stem>_whoami`. */
  readonly stem: string;
  /** Delay before answering tools/list, ms (concurrency tests). */
  readonly listDelayMs?: number;
  /** 2026 only: the cache hints of its tools/list and prompts/list (the v2 server's `cacheHints`). */
  readonly listHints?: { readonly ttlMs: number; readonly cacheScope: 'public' | 'private' };
  /** `2026` (default): v2 SDK createMcpHandler, stateless 2026-07-28; `2025`: v1 SDK, stateless. */
  readonly era?: '2025' | '2026';
}

function rpcMethodOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const method = (body as { method?: unknown }).method;
  return typeof method === 'string' ? method : undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A real MCP server (official SDK) on 127.0.0.1 whose lists depend on the caller, the kind
 * `lists: live` exists for (docs/operations.md §11 "Live lists"): a fresh server per request, built
 * from the request's `x-tenant` header. Tools: `<tenant>_<stem>` (echoes the tenant it was called
 * for) and `<stem>_whoami`; prompt `<tenant>_brief`. Without the header the tenant is `anon`.
 */
export class LiveUpstream {
  readonly requests: LiveRequest[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly v2 = createMcpHandler(
    (ctx) => this.buildV2(ctx.requestInfo?.headers.get('x-tenant') ?? 'anon'),
    { legacy: 'reject' },
  );

  private constructor(private readonly options: LiveUpstreamOptions) {}

  static async start(options: LiveUpstreamOptions): Promise<LiveUpstream> {
    const upstream = new LiveUpstream(options);
    const server = createServer((req, res) => {
      upstream.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    server.on('connection', (socket) => {
      upstream.sockets.add(socket);
      socket.on('close', () => upstream.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    upstream.server = server;
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}/mcp`;
  }

  /** tools/list requests, optionally only those for one tenant. */
  toolLists(tenant?: string): LiveRequest[] {
    return this.requests.filter(
      (r) => r.rpcMethod === 'tools/list' && (tenant === undefined || r.tenant === tenant),
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await this.v2.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.method === 'POST' ? await readBody(req) : undefined;
    let body: unknown;
    try {
      body = raw === undefined || raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const tenantHeader = req.headers['x-tenant'];
    const entry: LiveRequest = {
      rpcMethod: rpcMethodOf(body),
      tenant: typeof tenantHeader === 'string' ? tenantHeader : undefined,
      startedAt: performance.now(),
    };
    this.requests.push(entry);
    res.on('close', () => (entry.endedAt = performance.now()));
    if (entry.rpcMethod === 'tools/list' && (this.options.listDelayMs ?? 0) > 0)
      await sleep(this.options.listDelayMs ?? 0);
    if (this.options.era === '2025') return this.handleV1(req, res, body, entry.tenant ?? 'anon');
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const response = await this.v2.fetch(
      new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: raw === undefined ? undefined : new Uint8Array(raw),
      }),
    );
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out);
    if (response.body !== null)
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
        res.write(chunk);
    res.end();
  }

  /** 2025, stateless: a v1 McpServer and transport per request (no session), JSON answers. */
  private async handleV1(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    tenant: string,
  ): Promise<void> {
    const server = new V1McpServer({ name: this.options.stem, version: '1.0.0' });
    const { stem } = this.options;
    server.registerTool(
      `${tenant}_${stem}`,
      { description: `${stem} for ${tenant}`, inputSchema: { note: z.string().optional() } },
      () => ({ content: [{ type: 'text', text: `${stem} answered ${tenant}` }] }),
    );
    server.registerTool(`${stem}_whoami`, { description: 'Names the caller' }, () => ({
      content: [{ type: 'text', text: tenant }],
    }));
    server.registerPrompt(`${tenant}_brief`, { description: `Brief for ${tenant}` }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: tenant } }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  private buildV2(tenant: string): V2McpServer {
    const { stem, listHints } = this.options;
    const server = new V2McpServer(
      { name: stem, version: '2.0.0' },
      listHints === undefined
        ? {}
        : { cacheHints: { 'tools/list': listHints, 'prompts/list': listHints } },
    );
    server.registerTool(
      `${tenant}_${stem}`,
      {
        description: `${stem} for ${tenant}`,
        inputSchema: z.object({ note: z.string().optional() }),
      },
      () => ({ content: [{ type: 'text', text: `${stem} answered ${tenant}` }] }),
    );
    server.registerTool(`${stem}_whoami`, { description: 'Names the caller' }, () => ({
      content: [{ type: 'text', text: tenant }],
    }));
    server.registerPrompt(`${tenant}_brief`, { description: `Brief for ${tenant}` }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: tenant } }],
    }));
    return server;
  }
}
