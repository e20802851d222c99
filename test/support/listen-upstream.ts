import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** The resource of ListenUpstream. */
export const STATUS_URI = 'status://calc/now';

/**
 * A real 2026-07-28 MCP server built with the v2 SDK (`createMcpHandler`, `legacy: 'reject'`)
 * whose tool list changes at runtime, for `subscriptions/listen` tests
 * (docs/operations.md §11 "Notification streams"): its listen router (the SDK's) acknowledges
 * listens and delivers what `notify` publishes. It also serves one resource, `STATUS_URI`, whose
 * updates `notifyResourceUpdated` publishes. `addTool` registers one more tool and publishes
 * tools/list_changed; `openListens` counts the listen streams the gateway holds open on it right
 * now (a stream counts until its HTTP response closes), `listensSeen` every listen request it got.
 */
export class ListenUpstream {
  private readonly toolNames: string[];
  private readonly handler = createMcpHandler(() => this.buildServer(), {
    legacy: 'reject',
    keepAliveMs: 0,
  });
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;
  /** The Authorization header of every request that carried one, in order. */
  readonly authorizations: string[] = [];
  /** Listen streams open now. */
  openListens = 0;
  /** Bodies of every subscriptions/listen request received. */
  readonly listensSeen: Record<string, unknown>[] = [];
  /** The Authorization header of each of those listen requests (undefined without one), in order. */
  readonly listenAuthorizations: (string | undefined)[] = [];

  private constructor(
    tools: readonly string[],
    private readonly extraResources: readonly string[],
  ) {
    this.toolNames = [...tools];
  }

  /** @param extraResources more resource URIs it serves beside STATUS_URI (e.g. a long one) */
  static async start(
    tools: readonly string[] = ['echo'],
    extraResources: readonly string[] = [],
  ): Promise<ListenUpstream> {
    const upstream = new ListenUpstream(tools, extraResources);
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
    upstream.boundPort = (server.address() as AddressInfo).port;
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}/mcp`;
  }

  /** Registers one more tool (listed from the next request on) and publishes tools/list_changed. */
  addTool(name: string): void {
    this.toolNames.push(name);
    this.handler.notify.toolsChanged();
  }

  /** Publishes notifications/resources/updated for this URI. */
  notifyResourceUpdated(uri: string): void {
    this.handler.notify.resourceUpdated(uri);
  }

  /** Publishes tools/list_changed without changing anything. */
  notifyToolsChanged(): void {
    this.handler.notify.toolsChanged();
  }

  /** Drops every connection the gateway holds to it (a restart, a load balancer's idle cut). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    await this.handler.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private buildServer(): McpServer {
    const server = new McpServer(
      { name: 'listen-upstream-v2', version: '2.0.0' },
      { capabilities: { resources: { subscribe: true, listChanged: true } } },
    );
    for (const name of this.toolNames)
      server.registerTool(
        name,
        { description: `Tool ${name}`, inputSchema: z.object({ text: z.string().optional() }) },
        ({ text }) => ({ content: [{ type: 'text', text: `${name}:${text ?? ''}` }] }),
      );
    server.registerResource(
      'status',
      STATUS_URI,
      { description: 'A status that changes', mimeType: 'text/plain' },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ok' }] }),
    );
    this.extraResources.forEach((extra, i) =>
      server.registerResource(`extra-${i}`, extra, { mimeType: 'text/plain' }, (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ok' }],
      })),
    );
    return server;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (typeof req.headers.authorization === 'string')
      this.authorizations.push(req.headers.authorization);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    let body: Record<string, unknown> | undefined;
    try {
      body = raw.length === 0 ? undefined : (JSON.parse(raw.toString('utf8')) as typeof body);
    } catch {
      body = undefined;
    }
    if (body?.method === 'subscriptions/listen') {
      this.listensSeen.push(body);
      this.listenAuthorizations.push(
        typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined,
      );
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
