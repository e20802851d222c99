import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Test support only (specs of this lib): not exported from the lib's index. */

/** Handles one request; `body` is the raw request body. */
export type TestHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
) => unknown;

/** One request as the test server received it. */
export interface SeenRequest {
  readonly method: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The JSON body, parsed; undefined when empty or not JSON. */
  readonly body?: Record<string, unknown>;
}

export function parseJsonBody(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A node:http server on 127.0.0.1, an ephemeral port, that records every request and whose
 * handler can be swapped (an upstream that changes era under a live connection).
 */
export class TestServer {
  readonly seen: SeenRequest[] = [];

  private constructor(
    private readonly server: http.Server,
    public handler: TestHandler,
  ) {}

  static async start(handler: TestHandler): Promise<TestServer> {
    const server = http.createServer();
    const test = new TestServer(server, handler);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        test.seen.push({
          method: req.method ?? '',
          headers: req.headers,
          body: parseJsonBody(body),
        });
        Promise.resolve(test.handler(req, res, body)).catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(500);
          res.end(String(err));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return test;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** Bodies of the POSTs received, optionally only those of one JSON-RPC method. */
  posts(method?: string): Array<Record<string, unknown>> {
    const bodies: Array<Record<string, unknown>> = [];
    for (const seen of this.seen) {
      if (seen.method !== 'POST' || seen.body === undefined) continue;
      if (method === undefined || seen.body.method === method) bodies.push(seen.body);
    }
    return bodies;
  }

  /** The last request of a JSON-RPC method. */
  last(method: string): SeenRequest | undefined {
    return this.seen.filter((s) => s.body?.method === method).at(-1);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Writes one JSON answer. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
