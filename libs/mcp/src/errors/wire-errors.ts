import { JsonRpcCode } from '@app/wire';
import { GatewayError, GatewayErrorCode } from './gateway-error';

/** A JSON-RPC error as written: the HTTP status of the POST and the error object's code. */
export interface WireError {
  readonly httpStatus: number;
  readonly code: number;
}

/**
 * Legacy era (2025-11-25 and earlier). Transport rejections follow the official SDK's
 * Streamable HTTP server (-32000 with 4xx; wire notes §1.1); method-level errors are in-band
 * on HTTP 200. An unknown tool is -32001 "Tool not found" (contract §8).
 */
export function legacyWireError(code: GatewayErrorCode): WireError {
  switch (code) {
    case GatewayErrorCode.ParseError:
      return { httpStatus: 400, code: JsonRpcCode.ParseError };
    case GatewayErrorCode.InvalidRequest:
      return { httpStatus: 400, code: JsonRpcCode.InvalidRequest };
    case GatewayErrorCode.MethodNotFound:
      return { httpStatus: 200, code: JsonRpcCode.MethodNotFound };
    case GatewayErrorCode.InvalidParams:
      return { httpStatus: 200, code: JsonRpcCode.InvalidParams };
    case GatewayErrorCode.ToolNotFound:
      return { httpStatus: 200, code: JsonRpcCode.NotFound };
    case GatewayErrorCode.RegistryUnavailable:
    case GatewayErrorCode.LimitReached:
      return { httpStatus: 200, code: JsonRpcCode.InternalError };
    case GatewayErrorCode.SessionNotFound:
      return { httpStatus: 404, code: JsonRpcCode.NotFound };
    case GatewayErrorCode.UnsupportedProtocolVersion:
      return { httpStatus: 400, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.UnsupportedMediaType:
      return { httpStatus: 415, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.NotAcceptable:
      return { httpStatus: 406, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.MethodNotAllowed:
      return { httpStatus: 405, code: JsonRpcCode.ServerError };
    // The spec says 403 and leaves the body open (wire notes §1.1); -32000 with id null is what
    // the official SDKs' Origin and Host validation answers.
    case GatewayErrorCode.Forbidden:
      return { httpStatus: 403, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.Internal:
      return { httpStatus: 500, code: JsonRpcCode.InternalError };
    // the upstream's own code is written instead (ForwardedError.rpcCode)
    case GatewayErrorCode.Forwarded:
      return { httpStatus: 200, code: JsonRpcCode.InternalError };
    case GatewayErrorCode.RateLimited:
      return { httpStatus: 429, code: JsonRpcCode.RateLimited };
  }
}

/**
 * 2026-07-28 (wire notes §1.2, G-19): validation failures of the transport are 400 with their
 * MCP code, an unknown method is 404 -32601, and every error a method handler raises is
 * in-band on 200 (an unknown tool is -32602). A handler crash is 500 -32603.
 */
export function modernWireError(code: GatewayErrorCode): WireError {
  switch (code) {
    case GatewayErrorCode.ParseError:
      return { httpStatus: 400, code: JsonRpcCode.ParseError };
    case GatewayErrorCode.InvalidRequest:
      return { httpStatus: 400, code: JsonRpcCode.InvalidRequest };
    case GatewayErrorCode.MethodNotFound:
      return { httpStatus: 404, code: JsonRpcCode.MethodNotFound };
    case GatewayErrorCode.InvalidParams:
    case GatewayErrorCode.ToolNotFound:
      return { httpStatus: 200, code: JsonRpcCode.InvalidParams };
    case GatewayErrorCode.RegistryUnavailable:
    case GatewayErrorCode.LimitReached:
    case GatewayErrorCode.Forwarded:
      return { httpStatus: 200, code: JsonRpcCode.InternalError };
    case GatewayErrorCode.SessionNotFound:
    case GatewayErrorCode.UnsupportedProtocolVersion:
      return { httpStatus: 400, code: JsonRpcCode.UnsupportedProtocolVersion };
    case GatewayErrorCode.UnsupportedMediaType:
      return { httpStatus: 415, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.NotAcceptable:
      return { httpStatus: 406, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.MethodNotAllowed:
      return { httpStatus: 405, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.Forbidden:
      return { httpStatus: 403, code: JsonRpcCode.ServerError };
    case GatewayErrorCode.Internal:
      return { httpStatus: 500, code: JsonRpcCode.InternalError };
    case GatewayErrorCode.RateLimited:
      return { httpStatus: 429, code: JsonRpcCode.RateLimited };
  }
}

/**
 * Extra HTTP headers of an error answer: `Retry-After` (seconds) for a rate-limited request
 * (docs/operations.md §14 "Rate limits per caller").
 */
export function errorHeaders(error: GatewayError): Record<string, string> {
  const seconds = error.data?.retryAfterSeconds;
  return error.code === GatewayErrorCode.RateLimited && typeof seconds === 'number'
    ? { 'retry-after': String(seconds) }
    : {};
}
