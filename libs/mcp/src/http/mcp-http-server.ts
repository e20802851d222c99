import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SHUTDOWN_REASON } from '@app/execution';
import { Injectable, Logger } from '@nestjs/common';
import { HttpAccessPolicy } from './http-access.policy';
import { McpTransport } from '../mcp-transport.service';
import {
  acceptsGzip,
  gzipParts,
  hasPrecompressed,
  PrecompressedBytes,
  type BodyPart,
} from './gzip-splice';
import { errorEnvelope, type HttpAnswer } from './http-answer';
import { repeatedSingleHeader } from './repeated-headers';

/** Request bodies above this are refused with 413 (the official SDKs' limit; wire notes G-31). */
export const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A client has this long to send its whole request (a body dripped byte by byte is cut). */
const REQUEST_TIMEOUT_MS = 30_000;
/** After the grace period, how long the "shutting down" answers of abandoned calls may take to write. */
const ABANDON_WRITE_MS = 1_000;
/** Idle keep-alive connections stay open this long (longer than common load-balancer idles). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Strict UTF-8: invalid bytes are a parse error, never silently replaced (contract §10). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeBody(chunks: readonly Buffer[], length: number): string | null {
  try {
    return UTF8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
  } catch {
    return null;
  }
}

/**
 * Writes an answer; a body given as parts (tools/list) is written part by part, unjoined, and
 * gzip-encoded from its precompressed part when the request accepts gzip (issue 9, fault 12).
 */
function write(res: ServerResponse, answer: HttpAnswer, request?: IncomingMessage): void {
  const { body } = answer;
  if (body === undefined) {
    res.writeHead(answer.status, answer.headers).end();
  } else if (typeof body === 'string') {
    res
      .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) })
      .end(body);
  } else if (hasPrecompressed(body)) {
    if (request !== undefined && acceptsGzip(request.headers)) {
      const { buffers, length } = gzipParts(body);
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-encoding': 'gzip',
        vary: varyWithAcceptEncoding(res),
        'content-length': length,
      });
      for (const b of buffers) res.write(b);
      res.end();
    } else {
      writeParts(res, answer, body, { vary: varyWithAcceptEncoding(res) });
    }
  } else {
    writeParts(res, answer, body, {});
  }
}

/** `Vary` for an answer whose encoding depends on Accept-Encoding, keeping a `Vary: Origin` set for CORS. */
function varyWithAcceptEncoding(res: ServerResponse): string {
  const set = res.getHeader('vary');
  return set === undefined ? 'accept-encoding' : `${String(set)}, accept-encoding`;
}

function writeParts(
  res: ServerResponse,
  answer: HttpAnswer,
  parts: readonly BodyPart[],
  extra: Record<string, string>,
): void {
  let length = 0;
  for (const part of parts)
    length +=
      typeof part === 'string'
        ? Buffer.byteLength(part)
        : part instanceof PrecompressedBytes
          ? part.raw.length
          : part.length;
  res.writeHead(answer.status, { ...answer.headers, ...extra, 'content-length': length });
  for (const part of parts) res.write(part instanceof PrecompressedBytes ? part.raw : part);
  res.end();
}

function plainError(
  status: number,
  message: string,
  extra: Record<string, string> = {},
): HttpAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...extra },
    body: errorEnvelope(null, status >= 500 ? -32603 : -32000, message),
  };
}

/**
 * The agents' listener (PORT): POST /mcp on plain node:http, handing each request to
 * McpTransport. No framework router, hooks, pipes or interceptors on this path, so a call
 * costs little more than a bare Node proxy (DESIGN "The request path stays lean"); the
 * framework serves the management port only.
 */
@Injectable()
export class McpHttpServer {
  private readonly logger = new Logger('Mcp');
  private server?: Server;
  private draining = false;
  /** Requests whose answer is not written yet, with their response: aborted when the grace period ends. */
  private readonly inFlight = new Map<AbortController, ServerResponse>();
  private readonly connectionIds = new WeakMap<Socket, number>();
  private nextConnectionId = 1;

  constructor(
    private readonly transport: McpTransport,
    private readonly access: HttpAccessPolicy,
  ) {}

  /** Starts listening; resolves with the bound port (PORT=0 picks a free one). */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer(
      { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
      (req, res) => this.handle(req, res),
    );
    server.on('connection', (socket: Socket) => {
      this.connectionIds.set(socket, this.nextConnectionId++);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /**
   * Graceful stop: no new connections, 503 for requests that still arrive on open ones,
   * in-flight requests finish; after `graceMs` the remaining connections are cut.
   * Resolves with true when everything finished in time.
   */
  async drain(graceMs: number): Promise<boolean> {
    const server = this.server;
    if (server === undefined) return true;
    this.draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // A keep-alive connection whose request finishes after close() began stays open until
    // closed: sweep idle ones so the drain ends when the last in-flight call does.
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      closed.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    if (timedOut) {
      await this.abandonInFlight();
      server.closeAllConnections();
      await closed;
    }
    clearInterval(sweeper);
    clearTimeout(timer);
    return !timedOut;
  }

  /**
   * The grace period is over: every call still running is answered with an isError result
   * saying the gateway is shutting down (issue 9, fault 6), instead of a TCP reset that
   * clients and metrics would read as an unreachable Tool Service. Waits at most
   * ABANDON_WRITE_MS for those answers to be written.
   */
  private async abandonInFlight(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const written = [...this.inFlight.values()].map(
      (res) => new Promise<void>((resolve) => res.once('close', () => resolve())),
    );
    for (const controller of this.inFlight.keys()) controller.abort(SHUTDOWN_REASON);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(written),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ABANDON_WRITE_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.draining) {
      write(
        res,
        plainError(503, 'Service Unavailable: the gateway is shutting down', {
          connection: 'close',
        }),
      );
      return;
    }
    const path = req.url === undefined ? '' : req.url.split('?', 1)[0];
    if (path !== '/mcp') {
      write(res, plainError(404, 'Not Found: the MCP endpoint is POST /mcp'));
      req.resume();
      return;
    }
    // Origin and Host (issue 8), before anything is read or run: a refused request gets its 403
    // and nothing else. An allowed Origin's CORS headers go onto whatever is answered
    // (writeHead merges headers set here), and its preflight is answered here.
    const access = this.access.admit(req.headers);
    if (access.kind === 'refuse') {
      write(res, access.answer);
      req.resume();
      return;
    }
    if (access.cors !== undefined) {
      for (const [name, value] of Object.entries(access.cors)) res.setHeader(name, value);
      if (req.method === 'OPTIONS') {
        write(res, this.access.preflight(access.cors));
        req.resume();
        return;
      }
    }
    if (req.method !== 'POST') {
      write(
        res,
        req.method === 'GET' || req.method === 'DELETE'
          ? this.transport.methodNotAllowed()
          : plainError(405, 'Method Not Allowed: use POST', { allow: 'POST' }),
      );
      req.resume();
      return;
    }
    const repeated = repeatedSingleHeader(req.rawHeaders);
    if (repeated !== undefined) {
      // Two values of an identity header must not reach a Tool Service joined into one.
      write(res, {
        status: 400,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: errorEnvelope(
          null,
          -32600,
          `Invalid Request: the ${repeated} header appears more than once; send it once`,
        ),
      });
      req.resume();
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (declared > MCP_MAX_BODY_BYTES) {
      this.tooLarge(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > MCP_MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        this.tooLarge(req, res);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (length > MCP_MAX_BODY_BYTES) return;
      const controller = new AbortController();
      this.inFlight.set(controller, res);
      res.once('close', () => {
        this.inFlight.delete(controller);
        // closed before the answer was written: the client went away (issue 9, fault 3)
        if (!res.writableFinished) controller.abort('client-closed');
      });
      const connectionId = this.connectionIds.get(req.socket) ?? 0;
      this.transport
        .post({
          headers: req.headers,
          body: length === 0 ? '' : decodeBody(chunks, length),
          call: { controller, connectionId },
        })
        .then((answer) => write(res, answer, req))
        .catch((err: unknown) => {
          this.logger.error(
            `Unhandled error on /mcp: ${err instanceof Error ? (err.stack ?? err.name) : typeof err}`,
          );
          if (!res.headersSent) write(res, plainError(500, 'Internal error'));
        });
    });
  }

  /** 413, then the connection closes: the rest of the body is not read. */
  private tooLarge(req: IncomingMessage, res: ServerResponse): void {
    write(
      res,
      plainError(413, `Payload Too Large: the body exceeds ${MCP_MAX_BODY_BYTES} bytes`, {
        connection: 'close',
      }),
    );
    req.pause();
  }
}
