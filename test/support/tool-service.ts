import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { listenOnStablePort } from './ports';

/** One HTTP request a test Tool Service received, as it arrived. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** Raw body bytes. */
  readonly body: Buffer;
  readonly at: number;
}

/** What the Tool Service answers to one request. */
export interface CannedResponse {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  /** An object/array is sent as JSON; a string or Buffer as is. */
  readonly body?: unknown;
  /** Wait this long before answering. */
  readonly delayMs?: number;
  /** Never answer (the socket stays open until the client gives up or the server stops). */
  readonly hang?: boolean;
  /** Stream this many bytes of filler JSON instead of `body`, to test size limits. */
  readonly streamBytes?: number;
}

export type Responder = (req: RecordedRequest) => CannedResponse | Promise<CannedResponse>;

/**
 * A real HTTP Tool Service on 127.0.0.1 that a test controls: GET {manifestPath} answers the
 * current `manifest` responder, POST {toolsPath}/{name} the tool's responder (default: echo
 * the JSON body). Every request is recorded.
 */
export class TestToolService {
  readonly requests: RecordedRequest[] = [];
  manifest: Responder;
  tools = new Map<string, Responder>();
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly open = new Set<ServerResponse>();
  private boundPort = 0;

  constructor(
    manifest: unknown,
    readonly manifestPath = '/tool-manifest',
    readonly toolsPath = '/mcp',
  ) {
    this.manifest = () => ({ body: manifest });
  }

  static async start(manifest: unknown, port = 0): Promise<TestToolService> {
    const service = new TestToolService(manifest);
    await service.listen(port);
    return service;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  get manifestUrl(): string {
    return `${this.url}${this.manifestPath}`;
  }

  get baseEndpoint(): string {
    return `${this.url}${this.toolsPath}`;
  }

  /** Serve this manifest (an object) from now on. */
  setManifest(manifest: unknown): void {
    this.manifest = () => ({ body: manifest });
  }

  /** Requests received whose exchange is still open: not answered, and not closed by the client. */
  get openRequests(): number {
    return this.open.size;
  }

  manifestRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.path === this.manifestPath);
  }

  toolRequests(name?: string): RecordedRequest[] {
    const prefix = `${this.toolsPath}/`;
    return this.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path.startsWith(prefix) &&
        (name === undefined || r.path === `${prefix}${name}`),
    );
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

  /** Stops listening and drops every open connection (the service is "down"). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks),
      at: Date.now(),
    };
    this.requests.push(recorded);
    let responder: Responder | undefined;
    if (recorded.method === 'GET' && recorded.path === this.manifestPath) responder = this.manifest;
    else if (recorded.method === 'POST' && recorded.path.startsWith(`${this.toolsPath}/`)) {
      responder = this.tools.get(recorded.path.slice(this.toolsPath.length + 1)) ?? echoResponder;
    }
    if (!responder) {
      res.writeHead(404).end();
      return;
    }
    const canned = await responder(recorded);
    if (canned.hang) return;
    if (canned.delayMs) await new Promise((r) => setTimeout(r, canned.delayMs));
    if (res.destroyed) return;
    if (canned.streamBytes !== undefined) {
      res.writeHead(canned.status ?? 200, {
        'content-type': 'application/json',
        ...canned.headers,
      });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      res.write('{"pad":"');
      const pump = (): void => {
        while (sent < canned.streamBytes! && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end('"}');
      };
      pump();
      return;
    }
    const body = canned.body;
    const isJson = typeof body === 'object' && body !== null && !Buffer.isBuffer(body);
    const payload =
      body === undefined ? '' : isJson ? JSON.stringify(body) : (body as string | Buffer);
    res.writeHead(canned.status ?? 200, {
      ...(isJson ? { 'content-type': 'application/json' } : {}),
      ...canned.headers,
    });
    res.end(payload);
  }
}

/** Default tool behaviour: 200 with the request body echoed as JSON `{ "received": <body> }`. */
export const echoResponder: Responder = (req) => ({
  headers: { 'content-type': 'application/json' },
  body: `{"received":${req.body.length > 0 ? req.body.toString('utf8') : 'null'}}`,
});
