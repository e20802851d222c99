import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  constants as zlib,
  createBrotliCompress,
  createDeflate,
  createGzip,
  type Zlib,
} from 'node:zlib';
import type { Transform } from 'node:stream';

/** What the proxy does to every answer's body. */
export type ProxyCoding = 'gzip' | 'deflate' | 'br' | 'zstd';

function encoderOf(coding: ProxyCoding): (Transform & Zlib) | undefined {
  switch (coding) {
    case 'gzip':
      return createGzip({ flush: zlib.Z_SYNC_FLUSH });
    case 'deflate':
      return createDeflate({ flush: zlib.Z_SYNC_FLUSH });
    case 'br':
      return createBrotliCompress({ flush: zlib.BROTLI_OPERATION_FLUSH });
    case 'zstd':
      // labelled only: the gateway must refuse a coding it does not know before reading it
      return undefined;
  }
}

/**
 * A reverse proxy on 127.0.0.1 in front of one MCP server that answers every request with
 * `Content-Encoding: <coding>`, as a CDN in front of an upstream may although the client sent
 * no Accept-Encoding (RFC 9110 §12.5.3: then any coding is acceptable). Bodies are encoded as
 * they stream, flushed per write, so SSE events arrive one by one. Empty answers (202, 204)
 * pass unencoded.
 */
export class CodingProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** @param target the MCP endpoint to forward to */
  static async start(target: string, coding: ProxyCoding): Promise<CodingProxy> {
    const to = new URL(target);
    const server = createServer((req, res) => {
      const out = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: to.pathname,
          headers: { ...req.headers, host: to.host },
        },
        (answer: IncomingMessage) => {
          const headers = { ...answer.headers };
          const empty = answer.statusCode === 202 || answer.statusCode === 204;
          const encoder = empty ? undefined : encoderOf(coding);
          if (!empty) {
            delete headers['content-length'];
            headers['content-encoding'] = coding;
          }
          res.writeHead(answer.statusCode ?? 502, headers);
          if (encoder === undefined) {
            answer.pipe(res);
            return;
          }
          answer.pipe(encoder).pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new CodingProxy(server, `http://127.0.0.1:${port}/mcp`);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }
}
