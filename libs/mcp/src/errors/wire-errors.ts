import type { UpstreamEra } from '@app/upstream';
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

/** The first and last code of the range 2026-07-28 reserves for the MCP spec (wire notes §5). */
const RESERVED_FIRST = -32099;
const RESERVED_LAST = -32020;

/**
 * An upstream's JSON-RPC error (ForwardedError) as a 2026-07-28 client gets it (wire notes §5,
 * G-17, G-19). An upstream of either era may answer with a code this revision does not let a
 * server send, and a 2025 upstream's codes in -32020…-32099 are its own (implementation-defined
 * there) while a 2026 client reads -32020 and -32022 as faults of its own request:
 * - -32002 (resource not found, 2025) is -32602, message and data as sent;
 * - -32601 is HTTP 404, a 2026 upstream's -32021 (a capability the client did not declare)
 *   HTTP 400;
 * - any other code in -32020…-32099, a 2025 upstream's -32021 among them (its own code there,
 *   `upstreamEra`), is -32603 naming the upstream's code in the message;
 * - every other code is passed on as sent, in-band (HTTP 200).
 * A 2025 client gets the upstream's code as sent: in that era the range is the server's.
 */
export function modernForwardedError(
  code: number,
  message: string,
  upstreamEra?: UpstreamEra,
): WireError & { message: string } {
  if (code === JsonRpcCode.ResourceNotFound)
    return { httpStatus: 200, code: JsonRpcCode.InvalidParams, message };
  if (code === JsonRpcCode.MethodNotFound) return { httpStatus: 404, code, message };
  if (asksMissingCapability(code, upstreamEra)) return { httpStatus: 400, code, message };
  if (code >= RESERVED_FIRST && code <= RESERVED_LAST)
    return {
      httpStatus: 200,
      code: JsonRpcCode.InternalError,
      message: `Internal error: the upstream answered with error ${code}, a code the 2026-07-28 revision reserves (${message})`,
    };
  return { httpStatus: 200, code, message };
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

/**
 * Whether an upstream's error code says the client lacks a capability the request needs: -32021
 * (MissingRequiredClientCapability) is a 2026-07-28 code; a 2025 upstream's -32021 is its own,
 * in the range that revision leaves to servers (wire notes §5).
 */
export function asksMissingCapability(code: number, upstreamEra: UpstreamEra | undefined): boolean {
  return code === JsonRpcCode.MissingClientCapability && upstreamEra !== '2025';
}

/**
 * Whether an upstream's error code asks the client to open a URL first: -32042
 * (URLElicitationRequired) is a 2025-11-25 code; 2026-07-28 defines none, so a 2026 upstream's
 * -32042 is an undefined reserved code (wire notes §5).
 */
export function asksUrlElicitation(code: number, upstreamEra: UpstreamEra | undefined): boolean {
  return code === JsonRpcCode.UrlElicitationRequired && upstreamEra !== '2026';
}
