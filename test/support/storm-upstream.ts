import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Server as V1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** Which list a storm notification announces. */
export type StormList = 'tools' | 'resources' | 'prompts';

/** How a storm is sent: `count` notifications `intervalMs` apart, cycling through `lists`. */
export interface StormOptions {
  readonly count: number;
  readonly intervalMs: number;
  readonly lists?: readonly StormList[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * What a storming upstream lists at a generation: each notification of a storm announces the
 * next generation, so the gateway's catalog shows which one it pulled last.
 */
function listsAt(generation: number) {
  return {
    tools: [
      { name: 'stable', description: 'always listed', inputSchema: { type: 'object' } },
      {
        name: `gen_${generation}`,
        description: 'this generation',
        inputSchema: { type: 'object' },
      },
    ],
    resources: [{ uri: `storm://gen/${generation}`, name: `gen ${generation}` }],
    prompts: [{ name: `prompt_${generation}`, description: 'this generation' }],
  };
}

/** The shared part: node:http on 127.0.0.1, the JSON-RPC methods received, the generation. */
abstract class StormUpstreamBase {
  /** The JSON-RPC method of every POST received, in order. */
  readonly rpcMethods: string[] = [];
  generation = 0;
  protected server?: Server;
  private readonly sockets = new Set<Socket>();
  protected boundPort = 0;

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}/mcp`;
  }

  /** How many requests of this JSON-RPC method arrived (e.g. tools/list: the list pulls). */
  count(method: string): number {
    return this.rpcMethods.filter((m) => m === method).length;
  }

  /**
   * Sends the storm: before each notification the generation advances, so the state after
   * the storm is generation `count` (counted from where it was).
   */
  async storm(options: StormOptions): Promise<void> {
    const lists = options.lists ?? ['tools'];
    const startedAt = performance.now();
    // Each notification at its own time: a late timer on a loaded machine does not stretch
    // the storm (100 × 10 ms stays a second).
    for (let i = 0; i < options.count; i++) {
      const wait = startedAt + i * options.intervalMs - performance.now();
      if (wait > 0) await sleep(wait);
      this.generation++;
      this.announce(lists[i % lists.length] as StormList);
    }
  }

  protected abstract announce(list: StormList): void;
  protected abstract handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void>;

  protected async listen(): Promise<void> {
    const server = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks);
        if (req.method === 'POST') {
          try {
            const body = JSON.parse(raw.toString('utf8')) as { method?: unknown };
            if (typeof body.method === 'string') this.rpcMethods.push(body.method);
          } catch {
            // not JSON: the SDK answers it
          }
        }
        await this.handle(req, res, raw);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
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

/**
 * A 2025-era upstream built with the v1 SDK (`Server` + StreamableHTTPServerTransport,
 * stateful sessions) whose lists change with every notification it sends on its sessions'
 * standalone GET streams (`notifications/{tools,resources,prompts}/list_changed`).
 */
export class V1StormUpstream extends StormUpstreamBase {
  private readonly sessions = new Map<
    string,
    { transport: StreamableHTTPServerTransport; server: V1Server }
  >();
  /** GET streams open now. */
  openGetStreams = 0;

  static async start(): Promise<V1StormUpstream> {
    const upstream = new V1StormUpstream();
    await upstream.listen();
    return upstream;
  }

  protected announce(list: StormList): void {
    for (const { server } of this.sessions.values()) {
      const sent =
        list === 'tools'
          ? server.sendToolListChanged()
          : list === 'resources'
            ? server.sendResourceListChanged()
            : server.sendPromptListChanged();
      void sent.catch(() => undefined);
    }
  }

  override async stop(): Promise<void> {
    const live = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(live.map(({ server }) => server.close()));
    await super.stop();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    let body: unknown;
    try {
      body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const header = req.headers['mcp-session-id'];
    const session = typeof header === 'string' ? this.sessions.get(header) : undefined;
    if (session !== undefined) {
      if (req.method === 'GET') {
        this.openGetStreams++;
        res.once('close', () => this.openGetStreams--);
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (header === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      const server = this.buildServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, { transport, server });
        },
        onsessionclosed: (id) => {
          this.sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(header === undefined ? 400 : 404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }),
    );
  }

  private buildServer(): V1Server {
    const server = new V1Server(
      { name: 'storm-upstream-v1', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true },
          prompts: { listChanged: true },
        },
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: listsAt(this.generation).tools,
    }));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: listsAt(this.generation).resources,
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [],
    }));
    server.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: listsAt(this.generation).prompts,
    }));
    return server;
  }
}

/**
 * A 2026-07-28 upstream built with the v2 SDK (`createMcpHandler`, stateless) whose lists
 * change with every notification it publishes on the listens the gateway holds open on it
 * (one per client listen stream: each notification reaches the gateway once per listen).
 */
export class V2StormUpstream extends StormUpstreamBase {
  private readonly handler = createMcpHandler(() => this.buildServer(), {
    legacy: 'reject',
    keepAliveMs: 0,
  });
  /** subscriptions/listen streams open now. */
  openListens = 0;

  static async start(): Promise<V2StormUpstream> {
    const upstream = new V2StormUpstream();
    await upstream.listen();
    return upstream;
  }

  protected announce(list: StormList): void {
    if (list === 'tools') this.handler.notify.toolsChanged();
    else if (list === 'resources') this.handler.notify.resourcesChanged();
    else this.handler.notify.promptsChanged();
  }

  override async stop(): Promise<void> {
    await this.handler.close();
    await super.stop();
  }

  private buildServer(): V2McpServer {
    const server = new V2McpServer(
      { name: 'storm-upstream-v2', version: '2.0.0' },
      { capabilities: { resources: { listChanged: true }, prompts: { listChanged: true } } },
    );
    const lists = listsAt(this.generation);
    for (const t of lists.tools)
      server.registerTool(
        t.name,
        { description: t.description, inputSchema: z.object({}) },
        () => ({
          content: [{ type: 'text', text: t.name }],
        }),
      );
    for (const r of lists.resources)
      server.registerResource(r.name, r.uri, { mimeType: 'text/plain' }, (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: r.name }],
      }));
    for (const p of lists.prompts)
      server.registerPrompt(p.name, { description: p.description }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: p.name } }],
      }));
    return server;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    let method: unknown;
    try {
      const body =
        req.method === 'POST' ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined;
      method =
        typeof body === 'object' && body !== null
          ? (body as { method?: unknown }).method
          : undefined;
    } catch {
      method = undefined;
    }
    if (method === 'subscriptions/listen') {
      this.openListens++;
      res.once('close', () => this.openListens--);
    }
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
      new Request(`http://127.0.0.1:${this.boundPort}${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? new Uint8Array(raw) : undefined,
        signal: aborted.signal,
      }),
    );
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out);
    res.flushHeaders();
    if (response.body !== null) {
      const reader = response.body.getReader();
      res.once('close', () => void reader.cancel().catch(() => undefined));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
    }
    res.end();
  }
}
