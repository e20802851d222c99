import type { IncomingHeaders } from '@app/execution';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import type { GatewayErrorCode } from '../errors/gateway-error';
import { legacyWireError } from '../errors/wire-errors';
import { idJson, type JsonRpcId } from '../jsonrpc/jsonrpc.types';
import type { BodyPart } from './gzip-splice';
import type { InFlightCall } from './in-flight-requests';
import type { FrameSource } from './sse-frame';

/** An HTTP request to /mcp, framework-free. */
export interface HttpExchange {
  readonly headers: IncomingHeaders;
  /** The body decoded as UTF-8 once, after all chunks arrived (B22); null when the bytes are not UTF-8. */
  readonly body: string | null;
  /** Its cancellation, when the listener tracks it (absent in unit tests of the codecs). */
  readonly call?: InFlightCall;
  /**
   * The authenticated caller (docs/operations.md §13), set by McpTransport before a codec sees the
   * request.
   */
  readonly caller?: CallerIdentity;
  /** What the caller may use (docs/operations.md §13 "Access"); undefined: everything. */
  readonly access?: CallerAccess;
  /**
   * The virtual server whose path the request came on (`/mcp/servers/{id}`, docs/operations.md
   * §16); undefined on `/mcp`. McpTransport narrows `access` to its view.
   */
  readonly server?: string;
  /**
   * The Authorization value the caller was authenticated with, for the rechecks of a stream
   * it opens (NotificationHub). Never sent on: `headers` lacks it when the caller's token may
   * not travel to sources (ResourceServer.mayPassOn).
   */
  readonly credential?: string | string[];
}

/**
 * JSON text, whole or as parts written one after the other: a large pre-serialized result
 * (tools/list) travels as bytes built once per catalog and is never copied into one string.
 */
export type JsonBody = string | readonly BodyPart[];

/** What /mcp answers, framework-free; McpHttpServer writes it. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Absent: no body (202, 405). */
  readonly body?: JsonBody;
  /**
   * An SSE answer written message by message as they come (a call that relays an upstream's
   * notifications and requests, docs/operations.md §10 "Relaying"): each text is one JSON-RPC
   * message, framed as one `message` event; a comment frame is written as a comment line
   * (keep-alive of a long-lived notification stream,
   * docs/operations.md §11 "Notification streams"). `body` is then absent.
   */
  readonly stream?: FrameSource;
}

/** Whether the client accepts an event stream (so a call may answer with one). */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && readAccept(accept).eventStream;
}

/** An SSE answer whose messages come from `stream` (see HttpAnswer.stream). */
export function streamAnswer(
  stream: FrameSource,
  extraHeaders: Readonly<Record<string, string>> = {},
): HttpAnswer {
  return {
    status: 200,
    headers: {
      'content-type': SSE_TYPE,
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      ...extraHeaders,
    },
    stream,
  };
}

function wrap(before: string, body: JsonBody, after: string): JsonBody {
  return typeof body === 'string' ? `${before}${body}${after}` : [before, ...body, after];
}

/** How a JSON-RPC response is framed for this client (B09). */
export type ResponseFormat = 'json' | 'sse';

const JSON_TYPE = 'application/json; charset=utf-8';
const SSE_TYPE = 'text/event-stream; charset=utf-8';

/**
 * Picks JSON unless the client accepts only an event stream; undefined when it accepts
 * neither (406). A missing Accept is taken as JSON: lenient, like most servers (B09 policy).
 */
export function negotiateFormat(accept: string | undefined): ResponseFormat | undefined {
  return accept === undefined ? 'json' : readAccept(accept).format;
}

/** What one Accept value allows: the answer format of a 2025 POST, and event streams at all. */
interface AcceptReading {
  readonly format: ResponseFormat | undefined;
  readonly eventStream: boolean;
}

/**
 * A client sends the same Accept on every request, so its reading is remembered per value (at
 * most READINGS_REMEMBERED values, forgotten all at once when full: a client that varies it
 * costs a parse per request, never memory); splitting and lowering it on each request was
 * about 5k instructions of a tools/call (docs/benchmarks.md, "Where a bundle call's
 * instructions go").
 */
const READINGS_REMEMBERED = 64;
const rememberedReadings = new Map<string, AcceptReading>();

function readAccept(accept: string): AcceptReading {
  const known = rememberedReadings.get(accept);
  if (known !== undefined) return known;
  const types = accept
    .split(',')
    .map((part) => part.split(';', 1)[0]?.trim().toLowerCase() ?? '')
    .filter((t) => t !== '');
  const reading: AcceptReading = {
    format:
      accept.trim() === '' ||
      types.some((t) => t === 'application/json' || t === '*/*' || t === 'application/*')
        ? 'json'
        : types.some((t) => t === 'text/event-stream' || t === 'text/*')
          ? 'sse'
          : undefined,
    eventStream: types.includes('text/event-stream'),
  };
  if (rememberedReadings.size >= READINGS_REMEMBERED) rememberedReadings.clear();
  rememberedReadings.set(accept, reading);
  return reading;
}

export function header(headers: IncomingHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `{"jsonrpc":"2.0","id":…,"result":…}` around a result already serialized. */
export function resultEnvelope(id: JsonRpcId, resultJson: JsonBody): JsonBody {
  return wrap(`{"jsonrpc":"2.0","id":${idJson(id)},"result":`, resultJson, '}');
}

export function errorEnvelope(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): string {
  const error = JSON.stringify(data === undefined ? { code, message } : { code, message, data });
  return `{"jsonrpc":"2.0","id":${idJson(id)},"error":${error}}`;
}

/** Frames one JSON-RPC message as the whole response: JSON, or one SSE `message` event. */
export function messageAnswer(
  status: number,
  message: JsonBody,
  format: ResponseFormat,
  extraHeaders: Readonly<Record<string, string>> = {},
): HttpAnswer {
  if (format === 'sse' && status === 200) {
    return {
      status,
      headers: { 'content-type': SSE_TYPE, 'cache-control': 'no-cache', ...extraHeaders },
      body: wrap('event: message\ndata: ', message, '\n\n'),
    };
  }
  return { status, headers: { 'content-type': JSON_TYPE, ...extraHeaders }, body: message };
}

/**
 * A refusal at the 2025 transport, before any request id is known (a GET stream, a DELETE, a
 * message that does not parse): the error without id, at the HTTP status and code the 2025 era
 * gives it (errors/wire-errors.ts).
 */
export function legacyTransportError(
  code: GatewayErrorCode,
  message: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): HttpAnswer {
  const wire = legacyWireError(code);
  return messageAnswer(
    wire.httpStatus,
    errorEnvelope(null, wire.code, message),
    'json',
    extraHeaders,
  );
}

/** 202 Accepted with no body: for notifications and client responses (B15). */
export const ACCEPTED: HttpAnswer = { status: 202, headers: {} };
