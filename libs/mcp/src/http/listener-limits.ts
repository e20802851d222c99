import { STATUS_CODES } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { lingeringClose } from '@app/http-body';
import { MCP_MAX_BODY_BYTES } from '@app/wire';
import type { HttpAnswer } from '../answers/http-answer';
import { plainError } from './http-write';

export { MCP_MAX_BODY_BYTES };

/**
 * node:http options of both /mcp listeners: a client has 30 s to send its whole request
 * (headers included; a body dripped byte by byte is cut with 408), checked every second
 * (node's default check runs every 30 s, so the bound was up to a minute); idle keep-alive
 * connections stay open 65 s (longer than common load-balancer idles).
 */
export const MCP_SERVER_OPTIONS = {
  requestTimeout: 30_000,
  headersTimeout: 30_000,
  connectionsCheckingInterval: 1_000,
  keepAliveTimeout: 65_000,
} as const;

/** 413 for a body over MCP_MAX_BODY_BYTES, on either listener; the connection then closes. */
export function payloadTooLarge(): HttpAnswer {
  return plainError(413, `Payload Too Large: the body exceeds ${MCP_MAX_BODY_BYTES} bytes`, {
    connection: 'close',
  });
}

/** 404 outside /mcp, on either listener. */
export function notFound(path?: string): HttpAnswer {
  // a virtual server's path whose id is none (docs/operations.md §16) says so
  const server = path?.startsWith('/mcp/servers/') === true ? path.slice(13, 77) : undefined;
  return plainError(
    404,
    server === undefined
      ? 'Not Found: the MCP endpoint is POST /mcp'
      : `Not Found: no virtual server "${server}" (GET /actuator/servers lists them); the MCP endpoint is POST /mcp or /mcp/servers/{id}`,
  );
}

/** 503 for a request that arrives while the listener drains; the connection then closes. */
export function shuttingDown(): HttpAnswer {
  return plainError(503, 'Service Unavailable: the gateway is shutting down', {
    connection: 'close',
  });
}

/** The status of a request node's HTTP parser refuses, by its error code (as node:http answers). */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * Both listeners' answer to a request node's HTTP parser refuses (a malformed request line,
 * Content-Length beside Transfer-Encoding, headers over 16 KiB, a request that took over 30 s):
 * the status line alone with `Connection: close`, then the connection ends — what node:http
 * answers on its own, which fastify would replace with a JSON body of its own. Nothing is
 * written once an answer on this connection has begun.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? 400;
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy();
}

/**
 * The 413 of a body over MCP_MAX_BODY_BYTES, followed by a lingering close (lingeringClose,
 * RFC 9112 §9.6): a client still sending its body reads the 413 instead of a reset.
 */
export function refuseTooLarge(req: IncomingMessage): void {
  const { status, headers, body } = payloadTooLarge();
  lingeringClose(req, { status, headers, body: typeof body === 'string' ? body : '' });
}
