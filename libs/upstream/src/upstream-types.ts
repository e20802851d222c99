import type { UpstreamProtocolSetting } from '@app/config';

/**
 * The vocabulary of the gateway's client towards one upstream MCP server (docs/operations.md §10):
 * what the DiscoveryModule and the ExecutionModule give it and get back.
 */

/** Which MCP revision to speak to an upstream: detect it, or pin one. */
export type UpstreamProtocol = UpstreamProtocolSetting;

/** The two MCP eras: `2025` is initialize + sessions, `2026` is stateless with a per-request envelope. */
export type UpstreamEra = '2025' | '2026';

/** One upstream MCP server, as configured. */
export interface UpstreamEndpoint {
  /** Upstream id; used in logs only, never sent. */
  readonly id: string;
  /** The MCP endpoint, `http:` or `https:` (path and query kept as given). */
  readonly url: string;
  readonly protocol: UpstreamProtocol;
  /**
   * Bound, in ms, on getting the request onto a connected socket: the TCP (and TLS) connect,
   * or the wait for a free pooled connection when the dispatcher limits them. Over it =
   * failure `unreachable`. Every request's own deadline still bounds the whole exchange.
   */
  readonly connectMillis: number;
  /**
   * Cap, in bytes as received, on one answer body: a JSON body, or a whole SSE answer stream
   * (every event on it). On the long-lived 2025 GET stream it caps each single message
   * instead. Over it = failure `too-large`, the request aborted at once.
   */
  readonly maxAnswerBytes: number;
  /** The gateway's identity: `clientInfo` at initialize (2025) and in `_meta` (2026). */
  readonly clientInfo: { readonly name: string; readonly version: string };
  /** The gateway's `Via` entry, on every request to the upstream (gatewayVia in @app/wire). */
  readonly via?: string;
  /**
   * Declared at initialize (2025) and in every request's `_meta` (2026), e.g.
   * `{sampling:{}, elicitation:{form:{}}, roots:{}}`.
   */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /**
   * The gateway's own credential towards the upstream (its `static` value or client-credentials
   * token; nothing where it has none): the extra headers of every session-level request (era
   * probe, initialize, notifications/initialized, the standalone GET stream, DELETE, answers to
   * server requests that belong to no caller). Asked at each use, so an expiring token is
   * renewed; a rejection fails that request as `credential`. Absent = no extra headers. A
   * caller's headers (UpstreamRequestOptions.headers) never go on session-level traffic
   * (docs/security.md, "Credentials towards sources").
   */
  readonly sessionHeaders?: () =>
    Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
}

/** One parsed JSON-RPC message (notification, request or response), as the upstream sent it. */
export type JsonRpcMessage = Record<string, unknown>;

/** Where a message from the upstream came from. */
export interface UpstreamMessageContext {
  /**
   * 2025: the upstream session the message arrived on (undefined for a server that issued
   * none). Give it to `respond` when answering a server->client request: it may be older than
   * the connection's current session. Always undefined in 2026.
   */
  readonly sessionId?: string;
}

/** Receives one message from the upstream, with where it came from. */
export type UpstreamMessageListener = (
  message: JsonRpcMessage,
  context: UpstreamMessageContext,
) => void;

/**
 * What the client needs of a caller's cancellation: `aborted`, and `abort` listeners added
 * and removed around each exchange. An AbortSignal is one; so is a lighter object over a
 * one-slot cancellation, which spares the call path an AbortController (an EventTarget) per
 * call. A string `reason` is what a 2025 upstream is told in notifications/cancelled.
 */
export interface UpstreamSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(
    type: 'abort',
    listener: () => void,
    options?: { readonly once?: boolean },
  ): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Per-request settings. */
export interface UpstreamRequestOptions {
  /**
   * The whole request in ms, from the call to the last byte of the answer, including a
   * connect, re-initialize or re-probe it may need. Over it = failure `timeout`.
   */
  readonly deadlineMillis: number;
  /** Aborting = failure `cancelled`, and the upstream HTTP request is aborted (its stream closed). */
  readonly signal?: UpstreamSignal;
  /**
   * Extra request headers, lower-case names: `authorization`, forwarded caller headers, 2026
   * `mcp-param-*`. Hop-by-hop headers, `host`, and the headers this client sets itself
   * (accept, content-type, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name,
   * last-event-id) are dropped: undici sends the endpoint's own Host. They go on this request
   * only (and on its notifications/cancelled), never on the connect, re-initialize or re-probe
   * it may need, which carry the endpoint's `sessionHeaders`.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * When the caller's credential in `headers` expires, ms since the epoch: a
   * notifications/cancelled sent after it goes without `headers` (no expired token is sent).
   */
  readonly credentialExpiresAtMs?: number;
  /**
   * The capabilities of the caller this request is sent for: a 2026 request carries them in
   * its `_meta` envelope (over any the params hold); a 2025 session declared the gateway's own
   * at initialize, so a 2025 request carries none.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /**
   * Every message that arrives on this request's SSE stream before its response, in order:
   * notifications (progress, message) and server->client requests (sampling/createMessage,
   * elicitation/create, roots/list). A server `ping` is answered by the connection and is not
   * given. A listener that throws is ignored, not fatal.
   */
  readonly onMessage?: UpstreamMessageListener;
  /**
   * A cap on the items of one list in the result (`result[key]`, readListPages): an answer
   * with more than `limit` is failure `refused` with message `refusal`, found by counting its
   * bytes as they arrive (the rest is not received) and its text before it is parsed, so a
   * list over the cap is never parsed whole (list-items.ts).
   */
  readonly listCap?: UpstreamListCap;
  /**
   * Takes the answer's bytes, as they arrive, from the gateway's budget of answer bytes held at
   * once (`execution.maxInFlightAnswerBytes`, shared with Tool Service answers): false = the
   * budget is spent, and the request ends at once as failure `refused` ("the gateway is busy").
   */
  readonly takeBytes?: (bytes: number) => boolean;
  /**
   * The request is a long-lived stream of notifications (a 2026 `subscriptions/listen`), not
   * one answer: its SSE answer is capped per event by `execution.maxResponseBytes`, as the 2025
   * GET stream is, never in total (a listen that lives long carries more than any one answer),
   * and a notification on it nested too deep or too wide is dropped, as on the GET stream,
   * rather than ending the stream (docs/operations.md §10 "Nesting", §11 "Notification
   * streams"). A response too deep or too wide still fails the request.
   */
  readonly notificationStream?: boolean;
}

/** The words of a request refused by UpstreamRequestOptions.takeBytes. */
export const ANSWER_BUDGET_REFUSAL =
  "the gateway is busy: the answers of the calls in flight hold all the memory it sets aside for them, or this caller's share of it (execution.maxInFlightAnswerBytes); retry shortly";

/** See UpstreamRequestOptions.listCap. */
export interface UpstreamListCap {
  readonly key: string;
  readonly limit: number;
  readonly refusal: string;
}

/**
 * Settings for `connect` (and the requests it makes). The connect carries the endpoint's
 * `sessionHeaders`, never a caller's: the session is shared by every caller.
 */
export interface UpstreamConnectOptions {
  /** The whole connect in ms (probe, initialize, notifications/initialized). Over it = `timeout`. */
  readonly deadlineMillis: number;
  /** Aborting = failure `cancelled` for this caller (a shared attempt goes on for the others). */
  readonly signal?: UpstreamSignal;
}

/** The upstream's answer to one request: its result, or its JSON-RPC error unchanged. */
export type UpstreamAnswer =
  | {
      readonly kind: 'result';
      readonly result: Record<string, unknown>;
      /**
       * `result` as the upstream wrote it (JSON text of that object, exactly), when it could be
       * cut out of the message without parsing anything twice: for passing it on unchanged.
       */
      readonly resultText?: string;
      /**
       * The revision of the server that answered: `ttlMs`/`cacheScope` are cache hints only from
       * a 2026 server (wire notes §3; a 2025 result's members of those names are its own).
       */
      readonly era?: UpstreamEra;
    }
  | {
      readonly kind: 'error';
      readonly code: number;
      readonly message: string;
      readonly data?: unknown;
      /**
       * The revision of the server that answered: a code's meaning depends on it (wire notes §5:
       * -32020…-32099 are the server's own in 2025, spec codes such as -32021 in 2026).
       */
      readonly era?: UpstreamEra;
    };

/** Self-reported identity of the upstream (`serverInfo`); never drives decisions. */
export interface UpstreamServerInfo {
  readonly name: string;
  readonly version: string;
  readonly [key: string]: unknown;
}

/**
 * Why there is no answer:
 * - `unreachable`: no connection (refused, name not resolved, connect timeout, reset before
 *   an answer began);
 * - `timeout`: the request's deadline passed;
 * - `cancelled`: the caller's signal aborted it;
 * - `http-status`: a non-2xx status without a JSON-RPC error body (see `status`), or
 *   401/403/5xx during era detection;
 * - `bad-answer`: an answer that is not JSON-RPC, not the response to the request, or cut short;
 * - `too-large`: the answer passed `maxAnswerBytes`;
 * - `session-lost`: the 2025 session was gone (404) again right after re-initializing, or a
 *   notification/response was sent on a session the upstream no longer knows;
 * - `era-mismatch`: the upstream does not speak the pinned (or any supported) revision;
 * - `too-deep`: the answer (or a message on its stream) nests deeper than the limit; refused
 *   before it is parsed;
 * - `credential`: the gateway's own credential for session-level traffic could not be had;
 * - `refused`: the answer passed the request's own `listCap`; it was not parsed;
 * - `address-refused`: a runtime-registered upstream's host resolved, at connect, to an
 *   address the registration rules refuse (connect-guard.ts); no connection was made;
 * - `removed`: the request was made for a runtime registration that was deleted, changed or
 *   registered again since (UpstreamConnections.get); nothing was sent.
 */
export type UpstreamFailureKind =
  | 'unreachable'
  | 'timeout'
  | 'cancelled'
  | 'http-status'
  | 'bad-answer'
  | 'too-large'
  | 'session-lost'
  | 'era-mismatch'
  | 'too-deep'
  | 'credential'
  | 'refused'
  | 'address-refused'
  | 'removed';

/**
 * A request to the upstream that produced no answer. The message says what happened in
 * words ("the upstream did not answer within 2000 ms") and never contains the URL, host,
 * port, IP, a header value or a token: it may reach clients.
 */
export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';

  /**
   * @param kind what went wrong
   * @param message a description free of URLs, hosts, ports, IPs, header values and tokens
   * @param status the HTTP status, for `http-status` (and where one was received)
   * @param mayHaveRun the request may have reached the upstream and run (REACHED_KINDS; an
   *   `unreachable` connection that was open and then broke, http-exchange.ts)
   */
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly status?: number,
    readonly mayHaveRun: boolean = REACHED_KINDS.has(kind),
  ) {
    super(message);
  }
}

/**
 * Failures after which the request may have run on the upstream: it answered and the answer
 * was refused (`bad-answer`, `too-large`, `too-deep`), or no answer came in time (`timeout`).
 * A tool call that ends so tells the caller to check before calling a tool that changes data
 * again, as a Tool Service's does (docs/operations.md §10 "Routing").
 */
const REACHED_KINDS: ReadonlySet<UpstreamFailureKind> = new Set<UpstreamFailureKind>([
  'timeout',
  'bad-answer',
  'too-large',
  'too-deep',
]);
