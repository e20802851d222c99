import type { CallCancellation, IncomingHeaders } from '@app/execution';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import type { CatalogTool } from '@app/registry';
import type { BodyPart } from '../answers/gzip-splice';
import type { FrameSource } from '../answers/sse-frame';
import type { JsonRpcId } from '../jsonrpc/jsonrpc.types';

/** A -32020 header fault: which header, what the body says, and the reason in words. */
export interface HeaderMismatch {
  readonly header: string;
  readonly body: string;
  readonly reason: string;
}

/** A result already serialized as JSON object text, in parts (tools/list serves bytes built once per catalog). */
export class PreSerialized {
  constructor(readonly parts: readonly BodyPart[]) {}
}

/**
 * A result object together with its JSON text, written as that text (an upstream's result
 * passed on as the upstream wrote it, docs/operations.md §10 "Routing"). The text holds no line
 * break, so it also fits in one SSE `data:` line. `value` is the same result parsed, for a codec
 * that must add to it.
 */
export class SerializedResult {
  constructor(
    readonly json: string,
    readonly value: Record<string, unknown>,
    /**
     * A 2026 upstream's cache hints on a `resources/read` result (`ttlMs`, `cacheScope`), which
     * `value` no longer holds (a 2025 client never sees them): what a 2026 client's answer
     * carries, capped (docs/operations.md §11 "Cache hints").
     */
    readonly readHints?: Readonly<Record<string, unknown>>,
  ) {}
}

/**
 * The result of a method that opens the client's 2025 session (`initialize`): the result
 * object, and the sealed session id the codec sends as `Mcp-Session-Id` (none in stateless
 * mode, which issues no session id).
 */
export class SessionOpened {
  constructor(
    readonly result: object,
    readonly sessionId: string | undefined,
  ) {}
}

/**
 * A result delivered as an event stream the handler opened (`subscriptions/listen`,
 * docs/operations.md §11 "Notification streams"): its messages first, the result as its last
 * message; the codec answers with the stream as it is.
 */
export class StreamedResult {
  constructor(readonly stream: FrameSource) {}
}

/**
 * The catalog tool a request names, looked up once per request by its handler's `prepare`:
 * the snapshot's entry, or undefined when the snapshot has none (a live upstream's tool, an
 * unknown name). The codec's header checks, the relay decision, the call and its audit line
 * all read this one lookup.
 */
export interface ToolTarget {
  readonly name: string;
  readonly tool: CatalogTool | undefined;
  /** The caller may not use the tool (docs/operations.md §13 "Access"): answered as unknown. */
  readonly denied?: boolean;
}

/** What the front door learns of a request before it dispatches it (MethodHandler.prepare). */
export interface PreparedRequest {
  /**
   * true when this request may relay messages before its result (it goes to an upstream MCP
   * server; docs/operations.md §10 "Relaying"): only then is an SSE answer prepared.
   */
  readonly mayRelay: boolean;
  /** The tool it names (tools/call). */
  readonly target?: ToolTarget;
}

/** A request that relays nothing and names no tool. */
export const PLAIN_REQUEST: PreparedRequest = { mayRelay: false };
/** A request that goes to an upstream and may relay its messages, naming no catalog tool. */
export const RELAYING_REQUEST: PreparedRequest = { mayRelay: true };

/** A result object to serialize, or one serialized already. */
export type MethodResult = object;

/** What a method handler may know about the request, whatever the protocol era. */
export interface MethodContext {
  readonly protocolVersion: string;
  /**
   * The request's JSON-RPC id (a listen stream's subscription id is its request's id); absent
   * where a handler is asked outside a request (a relayed answer).
   */
  readonly id?: JsonRpcId;
  /** The agent's HTTP request headers, lower-cased. */
  readonly headers: IncomingHeaders;
  /** The POST body as received, for byte-exact forwarding of tool arguments. */
  readonly rawBody: string;
  /**
   * Aborted when nobody waits for the answer any more: the client's connection closed, a
   * matching notifications/cancelled arrived, or (reason `'shutdown'`) the grace period ended.
   */
  readonly signal?: CallCancellation;
  /**
   * Writes a message (a notification, or a request relayed to the client) on this request's
   * SSE answer before its result (docs/operations.md §10 "Relaying"). Absent when the client does
   * not take an event stream: such messages cannot reach it.
   */
  readonly relay?: (message: object) => void;
  /**
   * false: `relay` carries notifications only (a 2026-07-28 answer stream must not carry
   * requests); an upstream's request to the client is then refused at once. Default true.
   */
  readonly relayRequests?: boolean;
  /**
   * The capabilities the client declared (from its 2025 session); undefined when unknown (no
   * session). A relayed upstream request needing one the client did not declare is refused.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /**
   * The client's 2025 session id, set only once the front door opened it for this caller (a
   * sealed id; never in stateless mode, which ignores the header): what per-session state
   * (its log level) is kept under.
   */
  readonly sessionId?: string;
  /**
   * When `sessionId` expires (epoch ms, mcp.session.ttlSeconds after initialize): from then on
   * the client's answer to a request put to it mid-call is 404 like any POST of the session, so
   * a call waiting for one ends then (docs/operations.md §9 "Ending a session").
   */
  readonly sessionExpiresAtMs?: number;
  /**
   * The authenticated caller (docs/operations.md §13), set by the front door before any handler
   * runs; undefined when `mcp.auth.mode` is `none`. Handlers filter lists and calls by it.
   */
  readonly caller?: CallerIdentity;
  /**
   * What the caller may use (docs/operations.md §13 "Access"), from its token on this request;
   * undefined means everything (no `mcp.access`, or auth off). Lists show only this; a call outside
   * it is answered as for an unknown name, after the same wait for a refresh.
   */
  readonly access?: CallerAccess;
  /** What `prepare` found for this request; absent when the request was not prepared. */
  readonly prepared?: PreparedRequest;
  /**
   * The Authorization value the caller was authenticated with (HttpExchange.credential): what a
   * stream that stays open checks again (docs/security.md "Sessions and notification streams").
   */
  readonly credential?: string | string[];
  /** The virtual server whose path the request came on (docs/operations.md §16); undefined: `/mcp`. */
  readonly server?: string;
}

/**
 * One MCP method, era-neutral: codecs decode a request into (params, context) and encode the
 * returned result or thrown GatewayError (DESIGN "an era is a codec").
 */
export interface MethodHandler {
  readonly method: string;
  /**
   * Whose rate-limit bucket a request of this method takes from (docs/operations.md §14 "Rate
   * limits per caller"): absent, the caller's, taken by the dispatcher before the handler runs;
   * `'handler'`, the handler takes the caller's and its own itself (tools/call: then the tool's);
   * `'none'`, not counted (the methods that open a session, a stream or say what the server is,
   * so that a caller over its budget can still connect and learn when to come back).
   */
  readonly rateLimit?: 'handler' | 'none';
  /** Looks up once what the request needs before it runs (PreparedRequest). Absent: PLAIN_REQUEST. */
  prepare?(
    params: Readonly<Record<string, unknown>> | undefined,
    access?: CallerAccess,
  ): PreparedRequest;
  /**
   * A 2026 request header of this method's own that disagrees with the body (tools/call: the
   * `Mcp-Param-*` headers of `x-mcp-header` arguments), answered 400 -32020 by the codec.
   * Absent: the method has none.
   */
  headerMismatch?(
    params: Readonly<Record<string, unknown>> | undefined,
    headers: IncomingHeaders,
    prepared: PreparedRequest,
  ): HeaderMismatch | undefined;
  handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult>;
}

export const METHOD_HANDLERS = Symbol('METHOD_HANDLERS');
