import type { UpstreamEra } from '@app/upstream';

/**
 * Protocol faults the gateway answers with a JSON-RPC error. A failing *tool* is never one of
 * these: it is a result with isError (DESIGN "Errors"). Each era's codec maps a code to its
 * wire form in one place (`wire-errors.ts`).
 */
export enum GatewayErrorCode {
  ParseError = 'parse_error',
  InvalidRequest = 'invalid_request',
  MethodNotFound = 'method_not_found',
  InvalidParams = 'invalid_params',
  ToolNotFound = 'tool_not_found',
  RegistryUnavailable = 'registry_unavailable',
  SessionNotFound = 'session_not_found',
  UnsupportedProtocolVersion = 'unsupported_protocol_version',
  UnsupportedMediaType = 'unsupported_media_type',
  NotAcceptable = 'not_acceptable',
  MethodNotAllowed = 'method_not_allowed',
  /** Origin or Host not allowed (MCP Streamable HTTP "Security Warning"). */
  Forbidden = 'forbidden',
  Internal = 'internal',
  /** An upstream MCP server's JSON-RPC error, relayed with its own code (ForwardedError). */
  Forwarded = 'forwarded',
  /**
   * A mcp.rateLimits bucket is empty (docs/operations.md §14 "Rate limits per caller"): HTTP 429 +
   * Retry-After; data.retryAfterSeconds.
   */
  RateLimited = 'rate_limited',
  /**
   * A capacity of this replica the request needs is taken (the listen streams' caps,
   * docs/operations.md §11 "Notification streams"): -32603, in-band.
   */
  LimitReached = 'limit_reached',
}

/** The message of RegistryUnavailable while no catalog has been published (contract §6). */
export const REGISTRY_UNAVAILABLE_MESSAGE =
  'Registry unavailable: no tool catalog has been published yet because a tool source has never answered with a valid manifest; try again shortly';

/** Thrown by method handlers and the transport; turned into a wire error by the codec. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';

  constructor(
    readonly code: GatewayErrorCode,
    /** Safe to show a client: never a URL, stack or upstream body. */
    message: string,
    readonly data?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/**
 * An upstream MCP server's JSON-RPC error, relayed unchanged (docs/operations.md §10 "Routing"):
 * its code, message and data, in-band (HTTP 200) like every method-level error.
 */
export class ForwardedError extends GatewayError {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly rpcData?: unknown,
    /**
     * The revision of the upstream whose error this is, when it is one: a 2025 upstream's
     * -32020…-32099 are its own codes, not the 2026 spec's (wire notes §5; modernForwardedError).
     */
    readonly upstreamEra?: UpstreamEra,
  ) {
    super(GatewayErrorCode.Forwarded, message);
  }
}

/**
 * A call to a tool the caller may not use (docs/operations.md §13 "Access"): written exactly like
 * an unknown tool (same code, same message shape), but the audit line says `denied`
 * (docs/operations.md §14 "Audit").
 */
export class ToolDeniedError extends GatewayError {
  constructor(message: string) {
    super(GatewayErrorCode.ToolNotFound, message);
  }
}
