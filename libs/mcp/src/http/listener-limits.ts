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
