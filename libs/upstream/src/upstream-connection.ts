import { Logger } from '@nestjs/common';
import type { Dispatcher } from 'undici';
import { Budget } from './budget';
import { PROBE_METHOD, probeVerdict, type ProbeVerdict } from './era-probe';
import {
  answerTooLarge,
  exchange,
  type ExchangeRequest,
  type ExchangeResult,
} from './http-exchange';
import { isResponseTo, type ParsedMessage, type RequestId } from './json-rpc';
import {
  FIRST_MODERN_VERSION,
  JsonRpcCode,
  LATEST_LEGACY_VERSION,
  logRank,
  MetaKey,
  moreVerboseLevel,
  stringifyMessage,
  type McpLogLevel,
  withoutRequestEnvelope,
} from '@app/wire';
import { mcpNameHeader } from './mcp-headers';
import {
  checkAccepted,
  errorCode,
  MAX_MESSAGE_DEPTH,
  MAX_MESSAGE_VALUES,
  isSuccess,
  plainOutcome,
  readAnswerEvent,
  readReply,
  readStreamMessage,
  type Reply,
} from './reply-reader';
import {
  headersFor,
  legacyHeaders,
  modernHeaders,
  resumeHeaders,
  sessionLevelHeaders,
  withEnvelope,
} from './request-shape';
import { StandaloneStream } from './standalone-stream';
import { UnownedAnswers } from './unowned-answers';
import {
  eraMismatch,
  initializeBody,
  sessionFromInitialize,
  validSessionId,
  type Session,
} from './upstream-session';
import {
  ANSWER_BUDGET_REFUSAL,
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamAnswer,
  type UpstreamConnectOptions,
  type UpstreamEndpoint,
  type UpstreamEra,
  type UpstreamMessageContext,
  type UpstreamMessageListener,
  type UpstreamListCap,
  type UpstreamRequestOptions,
  type UpstreamServerInfo,
  type UpstreamSignal,
} from './upstream-types';
import { ListItemCounter } from './list-items';
import { ownProgressToken } from './progress-token';
import {
  metaOf,
  tracedSessionRequest,
  tracedUpstreamRequest,
  untracedParams,
} from './upstream-request-span';
import {
  annotateSpan,
  CountedWarning,
  ThrottledLines,
  traceCarrier,
  tracedHere,
} from '@app/observability';

export { MAX_MESSAGE_DEPTH } from './reply-reader';

/**
 * 2026 errors that a 2025 server never sends as a transport rejection: a 2025 request answered
 * with them and a non-2xx status met a modern server (a 2026 server sends them with HTTP 400,
 * wire notes §5). With a 2xx they are the answer of a request that ran (in 2025 the range is
 * implementation-defined, a tool may use it): passed on, never a reason to send the request
 * again (wire notes G-30: only an idempotent call may run twice).
 */
const MODERN_ONLY_CODES: ReadonlySet<number> = new Set([
  JsonRpcCode.HeaderMismatch,
  JsonRpcCode.UnsupportedProtocolVersion,
]);

/** Where the connection's counted warnings go (CountedWarning). */
const UPSTREAM_LOGGER = new Logger('Upstream');

/** Bound on the best-effort DELETE at close and on a notifications/cancelled, in ms. */
const SHORT_DEADLINE_MILLIS = 2000;

/** Notifications that say one of the upstream's lists changed, wherever they arrive. */
const LIST_CHANGED: ReadonlySet<string> = new Set([
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
]);

/** What one send produced, and whether the connection should be renewed and the send repeated. */
interface SendOutcome {
  readonly outcome: UpstreamAnswer | UpstreamFailure;
  readonly renew?: 'session-lost' | 'wrong-era';
}

/** What a POST does with the messages on its SSE answer other than the response (`post`). */
interface Relay {
  /** Absent: a server request on the answer belongs to no caller and is answered -32601. */
  readonly onMessage?: UpstreamRequestOptions['onMessage'];
  readonly listCap?: UpstreamListCap;
  readonly takeBytes?: UpstreamRequestOptions['takeBytes'];
  /** The session the messages came on; `answer`: the one the answer's head opens (initialize). */
  readonly context: UpstreamMessageContext | 'answer';
  /** When the caller's credential in the request's headers expires (ms since the epoch). */
  readonly credentialExpiresAtMs?: number;
  /** UpstreamRequestOptions.notificationStream: capped per event, a bad notification dropped. */
  readonly notificationStream?: boolean;
}

/**
 * Whether the caller's credential has expired: what is sent again for the request (a resumed
 * stream's GET, the repeat after a renewed session) never goes with it (docs/security.md
 * "Answers to relayed requests").
 */
function credentialExpired(expiresAtMs: number | undefined): boolean {
  return expiresAtMs !== undefined && Date.now() >= expiresAtMs;
}

/** The MCP log level a request's `_meta` asks for (io.modelcontextprotocol/logLevel), if any. */
function requestLogLevel(params: Record<string, unknown> | undefined): McpLogLevel | undefined {
  const meta = params?._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const level = (meta as Record<string, unknown>)[MetaKey.logLevel];
  return logRank(level) === undefined ? undefined : (level as McpLogLevel);
}

/** Whether the session's server declared `logging` (only then does it take logging/setLevel). */
function offersLogging(session: Session): boolean {
  const logging = session.capabilities?.logging;
  return typeof logging === 'object' && logging !== null;
}

function isResultOutcome(outcome: UpstreamAnswer | UpstreamFailure): boolean {
  return !(outcome instanceof UpstreamFailure) && outcome.kind === 'result';
}

/** A notification that one of the upstream's lists changed. */
function isListChanged(message: JsonRpcMessage): boolean {
  return (
    message.id === undefined &&
    typeof message.method === 'string' &&
    LIST_CHANGED.has(message.method)
  );
}

/** A request (not a notification or response): it has a method and an id to answer. */
function requestIdOf(message: JsonRpcMessage): string | number | undefined {
  const { id } = message;
  return typeof message.method === 'string' && (typeof id === 'string' || typeof id === 'number')
    ? id
    : undefined;
}

function reasonText(signal: UpstreamSignal | undefined): string {
  const reason: unknown = signal?.reason;
  return typeof reason === 'string' && reason !== '' ? reason : 'cancelled by the gateway';
}

/** A request stream resumed this many times in a row without a new event is given up. */
const RESUME_FRUITLESS_MAX = 3;
/**
 * Wait before resuming when the stream set no `retry:`; the least and the most any `retry:`
 * may ask (the least as the GET stream's first backoff, standalone-stream.ts: an upstream that
 * sends `retry: 0` must not turn one call into a GET loop).
 */
const RESUME_DEFAULT_WAIT_MILLIS = 1000;
const RESUME_MIN_WAIT_MILLIS = 250;
const RESUME_MAX_WAIT_MILLIS = 10_000;

function delay(millis: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, millis).unref());
}

/**
 * The gateway's client towards ONE upstream MCP server, for both eras: it detects the era
 * (or uses the pinned one), keeps the 2025 session (re-initializing on 404), sends each
 * request in its era's shape, reads JSON and SSE answers, relays the messages that come with
 * them, and keeps the 2025 standalone GET stream open. Used by the DiscoveryModule (lists) and
 * the ExecutionModule (calls and relaying). Request ids are the connection's own counter.
 *
 * Its parts, each pure but the stream: the era probe's verdicts (era-probe.ts), reading
 * initialize's answer into a session (upstream-session.ts), the headers and `_meta` envelope
 * of each era (request-shape.ts), reading an answer (reply-reader.ts), the GET stream
 * (standalone-stream.ts) and the bounded answers owed to no caller (unowned-answers.ts).
 *
 * Every failure is an UpstreamFailure whose message names no URL, host, port, IP, header value
 * or token. Upstream JSON-RPC errors are answers (`kind: 'error'`), passed on unchanged.
 */
export class UpstreamConnection {
  private readonly url: URL;
  private session?: Session;
  /** The connect (or re-initialize, or re-probe) in flight; callers join it. */
  private attempt?: Promise<Session>;
  /** Bumped by close(): an attempt that finishes after it does not install its session. */
  private epoch = 0;
  private nextId = 1;
  private probes = 0;
  private readonly listeners = new Set<UpstreamMessageListener>();
  private stream?: StandaloneStream;
  private readonly unowned: UnownedAnswers;
  /** Notifications a listen stream dropped as too deep or too wide (docs/operations.md §10 "Nesting", "Width"). */
  private readonly dropped: CountedWarning;
  /**
   * The same for the 2025 GET stream, and its failures (re-opened with backoff): one line a
   * minute at most, whatever the upstream does (docs/operations.md §4 "What outsiders can
   * make the gateway log"), kept across its sessions.
   */
  private readonly streamDropped: CountedWarning;
  private readonly streamFailures = new ThrottledLines((line) => UPSTREAM_LOGGER.warn(line));
  /**
   * 2025: the level the shared session logs at, the most verbose any client has asked for
   * (sharedLogLevel); kept across re-initializing, where the new session is told it again.
   */
  private logLevel?: McpLogLevel;
  /** Sessions installed so far: from the second on, a 2025 one is a renewal (onRenewed). */
  private installed = 0;
  private readonly renewedListeners = new Set<() => void>();

  /**
   * @param endpoint the upstream; its url must be http: or https: (else TypeError)
   * @param dispatcher the undici dispatcher (an Agent, keep-alive) every request goes through
   */
  constructor(
    private readonly endpoint: UpstreamEndpoint,
    private readonly dispatcher: Dispatcher,
  ) {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw new TypeError(`upstream ${endpoint.id}: the endpoint url is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`upstream ${endpoint.id}: the endpoint url must be http: or https:`);
    this.url = url;
    this.unowned = new UnownedAnswers(endpoint.id);
    this.dropped = new CountedWarning(
      (count) =>
        `Upstream ${endpoint.id}: ${count} notification(s) on a subscriptions/listen stream dropped unread: nested deeper than ${MAX_MESSAGE_DEPTH} levels or holding more than ${MAX_MESSAGE_VALUES} JSON values (docs/operations.md §10 "Nesting"); the listen goes on`,
      UPSTREAM_LOGGER,
    );
    this.streamDropped = new CountedWarning(
      (count) =>
        `Upstream ${endpoint.id}: ${count} message(s) on its GET stream dropped unread: nested deeper than ${MAX_MESSAGE_DEPTH} levels, holding more than ${MAX_MESSAGE_VALUES} JSON values or not JSON-RPC (docs/operations.md §10 "Nesting"); the stream goes on`,
      UPSTREAM_LOGGER,
    );
  }

  /** The era in use, once known (after connect or the first request); undefined while renewing. */
  get era(): UpstreamEra | undefined {
    return this.session?.era;
  }

  /**
   * 2025 era: the current upstream Mcp-Session-Id (undefined before initialize, for a
   * stateless 2025 server that issued none, or in 2026).
   */
  get sessionId(): string | undefined {
    return this.session?.sessionId;
  }

  /** Server capabilities from initialize (2025) or server/discover (2026). */
  /**
   * The most bytes one answer may have (`mcp.execution.maxResponseBytes`); a list's pages count
   * together (readListPages).
   */
  get maxAnswerBytes(): number {
    return this.endpoint.maxAnswerBytes;
  }

  get serverCapabilities(): Readonly<Record<string, unknown>> | undefined {
    return this.session?.capabilities;
  }

  /** serverInfo from initialize (2025) or server/discover's `_meta` (2026), when well formed. */
  get serverInfo(): UpstreamServerInfo | undefined {
    return this.session?.serverInfo;
  }

  /** The negotiated (2025) or used (2026) protocol version, e.g. `2025-11-25`. */
  get protocolVersion(): string | undefined {
    return this.session?.protocolVersion;
  }

  /** The server's `instructions`, if it gave any. */
  get instructions(): string | undefined {
    return this.session?.instructions;
  }

  /**
   * Detects the era (per endpoint.protocol) and, for 2025, opens the session (initialize,
   * notifications/initialized, then the standalone GET stream in the background). Idempotent;
   * concurrent callers share one attempt, each bounded by its own deadline and signal.
   *
   * Rejects with UpstreamFailure: `era-mismatch` (pinned revision not offered, or no common
   * revision), `http-status` (401/403/5xx, or initialize refused), `unreachable`, `timeout`,
   * `cancelled`, `bad-answer`, `too-large`. Nothing is remembered from a failed attempt: the
   * next connect tries again.
   */
  async connect(options: UpstreamConnectOptions): Promise<void> {
    const budget = new Budget(options.deadlineMillis, options.signal);
    await this.established(budget);
  }

  /**
   * Sends one request (connecting first if needed) and resolves with its response: the result
   * object, or the upstream's JSON-RPC error with code, message and data unchanged (also when
   * it came with a non-2xx status).
   *
   * 2026: params are sent as given plus the `_meta` envelope (protocolVersion always the one in
   * use; clientCapabilities and clientInfo from the endpoint unless params._meta has them;
   * every other `_meta` key, e.g. progressToken, kept), with MCP-Protocol-Version, Mcp-Method
   * and, for tools/call, prompts/get, resources/read and tasks/*, Mcp-Name (base64 sentinel for
   * values that are not plain ASCII). 2025: MCP-Protocol-Version and Mcp-Session-Id.
   *
   * Repeats the request once (new id) after re-initializing when a 2025 session is gone (404),
   * and once after re-detecting the era when the answer is from the other era (protocol
   * `auto` only; a pinned protocol fails with `era-mismatch`): a 2026 request answered 405,
   * 400/404 with -32000/-32001 (legacy transport errors) or a non-2xx -32022; a 2025 request
   * answered -32020 or -32022 with a non-2xx status (with a 2xx they are the answer of a request
   * that ran, passed on as sent). Concurrent callers share one re-initialize or re-detection.
   *
   * Rejects with UpstreamFailure: `timeout`, `cancelled` (the HTTP request is aborted; in 2025
   * notifications/cancelled is also sent, best effort, as it is on timeout), `unreachable`,
   * `http-status` (non-2xx without a JSON-RPC error; `status` set), `bad-answer`, `too-large`,
   * `session-lost` (404 again after re-initializing), `era-mismatch`, or a connect failure.
   */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
  ): Promise<UpstreamAnswer> {
    if (!tracedHere()) return this.requestUntraced(method, untracedParams(params), options);
    return tracedUpstreamRequest(this.endpoint.id, this.url, method, params, options, (p, o) =>
      this.requestUntraced(method, p, o),
    );
  }

  /**
   * A request the gateway makes for itself, no caller's (session-level traffic: the
   * `resources/unsubscribe` of a subscription whose last client left): it carries the
   * gateway's own credential (endpoint.sessionHeaders), as the session's initialize does.
   */
  async requestAsGateway(
    method: string,
    params: Record<string, unknown> | undefined,
    options: Omit<UpstreamRequestOptions, 'headers'>,
  ): Promise<UpstreamAnswer> {
    return this.request(method, params, { ...options, headers: await this.ownHeaders() });
  }

  private async requestUntraced(
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
  ): Promise<UpstreamAnswer> {
    const budget = new Budget(options.deadlineMillis, options.signal);
    // The session is shared: connecting and renewing carry the gateway's own credential
    // (endpoint.sessionHeaders), the caller's headers go on the caller's request only.
    let session = await this.established(budget);
    let reinitialized = false;
    let redetected = false;
    for (;;) {
      // 2026-07-28 removed logging/setLevel (wire notes G-28: a 2025-only method is never sent
      // to a 2026 server): the level goes in each request's _meta instead (UpstreamRouter)
      if (session.era === '2026' && method === 'logging/setLevel')
        return { kind: 'result', result: {} };
      const level = method === 'logging/setLevel' ? this.sharedLogLevel(params) : undefined;
      if (session.era === '2025' && level === undefined)
        await this.widenLogLevel(session, requestLogLevel(params), budget);
      const sent =
        session.era === '2026'
          ? await this.send2026(session, method, params, options, budget)
          : await this.send2025(
              session,
              method,
              level === undefined ? params : { ...params, level },
              options,
              budget,
            );
      if (level !== undefined && sent.renew === undefined && isResultOutcome(sent.outcome))
        this.logLevel = level;
      // the repeat carries the caller's headers: not once its credential has expired
      const repeats =
        (sent.renew === 'session-lost' && !reinitialized) ||
        (sent.renew === 'wrong-era' && !redetected && this.endpoint.protocol === 'auto');
      if (repeats && credentialExpired(options.credentialExpiresAtMs))
        throw new UpstreamFailure(
          'session-lost',
          "the upstream's session had to be renewed and the caller's credential has expired since; not sent again",
        );
      if (sent.renew === 'session-lost') {
        if (reinitialized)
          throw new UpstreamFailure(
            'session-lost',
            'the upstream lost the session again right after it was re-initialized',
          );
        reinitialized = true;
        session = await this.renew(session, 'initialize', budget);
        continue;
      }
      if (sent.renew === 'wrong-era' && !redetected) {
        if (this.endpoint.protocol !== 'auto')
          throw eraMismatch(
            `the upstream answered as a server of another era than the pinned ${this.endpoint.protocol}`,
          );
        redetected = true;
        session = await this.renew(session, 'detect', budget);
        continue;
      }
      if (sent.outcome instanceof UpstreamFailure) throw sent.outcome;
      // the era of the server that answered: what a code or a member means depends on it
      return { ...sent.outcome, era: session.era };
    }
  }

  /**
   * The level a client's `logging/setLevel` sets on the shared 2025 session: the more verbose
   * of the one asked and the one set before, so that one client asking for less never takes
   * another's messages away (the gateway filters what it relays by each client's own level;
   * docs/operations.md §10 "Logging"). Undefined for a level that is not one of MCP's eight
   * (sent as asked: the upstream answers it).
   */
  private sharedLogLevel(params: Record<string, unknown> | undefined): McpLogLevel | undefined {
    const asked = params?.level;
    if (logRank(asked) === undefined) return undefined;
    return moreVerboseLevel(this.logLevel, asked as McpLogLevel);
  }

  /**
   * Sets the shared 2025 session to `wanted` first when that is more verbose than its level (a
   * 2026 client's request, or a 2025 client's whose level was set on another replica, carries
   * it in `_meta`; docs/operations.md §10 "Logging"), so that the upstream sends what the
   * client asked for. Session-level traffic: the gateway's own credential, at most
   * SHORT_DEADLINE_MILLIS of the request's time; best effort (the request goes on either way,
   * and the level is not sent again to this session).
   */
  private async widenLogLevel(
    session: Session,
    wanted: McpLogLevel | undefined,
    budget: Budget,
  ): Promise<void> {
    if (wanted === undefined || !offersLogging(session)) return;
    const level = moreVerboseLevel(this.logLevel, wanted);
    if (level === this.logLevel) return;
    // set before it is sent: concurrent requests that want the same do not send it again, and
    // an upstream that refuses it or never answers costs one wait, not one per request
    this.logLevel = level;
    await this.setSessionLogLevel(session, level, budget);
  }

  /**
   * Tells a new 2025 session the level the one it replaces was set to, before the session is
   * used (session-level traffic: the gateway's own credential). Best effort: a failure leaves
   * the upstream's default.
   */
  private async restoreLogLevel(session: Session, budget: Budget): Promise<void> {
    const level = this.logLevel;
    if (level === undefined || session.era !== '2025' || !offersLogging(session)) return;
    await this.setSessionLogLevel(session, level, budget);
  }

  /**
   * `logging/setLevel` on this session only (a session lost meanwhile is renewed by the next
   * request, not here), with the gateway's own credential, at most SHORT_DEADLINE_MILLIS. Best
   * effort: whatever the upstream answers, or a failure, leaves the request going on.
   */
  private async setSessionLogLevel(
    session: Session,
    level: McpLogLevel,
    budget: Budget,
  ): Promise<void> {
    const millis = Math.min(SHORT_DEADLINE_MILLIS, Math.max(0, budget.left()));
    try {
      const headers = await this.ownHeaders();
      await this.send2025(
        session,
        'logging/setLevel',
        { level },
        { deadlineMillis: millis, headers },
        new Budget(millis, budget.signal),
      );
    } catch {
      // the upstream's default level stays
    }
  }

  /**
   * Sends a notification (connecting first if needed): 2025 with the session headers, 2026
   * with the envelope, MCP-Protocol-Version and Mcp-Method. Resolves when accepted (any 2xx,
   * normally 202). Rejects with UpstreamFailure: `session-lost` (404 on a 2025 session; the
   * next request re-initializes), `http-status`, `unreachable`, `timeout`, `cancelled`, or a
   * connect failure.
   */
  async notify(
    method: string,
    params: Record<string, unknown> | undefined,
    options: Omit<UpstreamRequestOptions, 'onMessage'>,
  ): Promise<void> {
    const budget = new Budget(options.deadlineMillis, options.signal);
    const session = await this.established(budget);
    await this.sendNotification(session, method, params, budget, options.headers);
  }

  /**
   * 2025 only: POSTs a JSON-RPC response (to a server->client request the upstream sent) on
   * the given session id, which may be older than the current one: give the `sessionId` of
   * the message context the request came with (undefined = no session header). Resolves when
   * accepted (any 2xx, normally 202). Does not connect. Rejects with UpstreamFailure:
   * `era-mismatch` (the upstream is 2026, which has no server->client requests),
   * `session-lost` (404: that session is gone), `http-status`, `unreachable`, `timeout`,
   * `cancelled`.
   */
  async respond(
    response: JsonRpcMessage,
    sessionId: string | undefined,
    options: Omit<UpstreamRequestOptions, 'onMessage'>,
  ): Promise<void> {
    const budget = new Budget(options.deadlineMillis, options.signal);
    if (this.session?.era === '2026')
      throw eraMismatch('the upstream speaks 2026-07-28, where clients never send responses');
    // the answer is part of the request that carried it from the client: in its trace
    const headers = legacyHeaders(
      tracedHere() ? { ...options.headers, ...traceCarrier() } : options.headers,
      {
        protocolVersion: this.session?.protocolVersion ?? LATEST_LEGACY_VERSION,
        sessionId,
      },
    );
    // The upstream may answer the POST with an SSE stream that carries a `ping` or a request:
    // it belongs to no caller and is answered so (-32601, a ping an empty result), through the
    // bounded answers owed to no caller, within this POST's deadline (docs/operations.md §10
    // "Relaying")
    const reply = await this.post(headers, JSON.stringify(response), undefined, budget, {
      context: { sessionId },
    });
    checkAccepted(reply, sessionId);
  }

  /**
   * Listens to messages that arrive outside any request: on the 2025 standalone GET SSE stream
   * (opened after initialize; a 405 means the server offers none; re-opened with backoff,
   * 250 ms doubling to 30 s, if it drops while the session lives), e.g.
   * notifications/tools/list_changed, notifications/resources/updated, or server requests
   * (answer those with `respond` and the context's sessionId). A list_changed notification
   * that arrives on a request's own SSE answer comes here too (as well as to that request's
   * `onMessage`): it concerns the upstream, not the caller. A server `ping` is answered by the
   * connection and comes to no one; so is any other server request that belongs to no caller
   * (one on the GET stream; on the answer of a request sent without `onMessage`, e.g. a list
   * pull; on the answer of the connection's own era probe, initialize or any notification,
   * e.g. notifications/initialized): answered -32601 at once with the gateway's own
   * credential, as JSON-RPC requires an answer. A listener that throws is ignored. Returns the
   * unsubscribe function.
   */
  onUnsolicited(listener: UpstreamMessageListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Listens for a 2025 session that replaces an earlier one of this connection (the upstream
   * lost it: a 404 re-initialized it; or it was closed and connected again). What the upstream
   * held for the gateway's session besides the log level (restoreLogLevel) is gone with it: the
   * resource subscriptions, which their holder subscribes again (docs/operations.md §10
   * "Resource subscriptions"). Called after the new session is in use; a listener that throws
   * is ignored. Returns the unsubscribe function.
   */
  onRenewed(listener: () => void): () => void {
    this.renewedListeners.add(listener);
    return () => {
      this.renewedListeners.delete(listener);
    };
  }

  private tellRenewed(): void {
    for (const listener of this.renewedListeners) {
      try {
        listener();
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /**
   * Ends the connection's state: closes the GET stream and DELETEs the 2025 session (best
   * effort, bounded by `deadlineMillis`, default 2000 ms; every outcome ignored). Never
   * rejects. The connection may be used again afterwards: the next request connects anew.
   */
  async close(options?: { readonly deadlineMillis?: number }): Promise<void> {
    this.epoch++;
    const session = this.session;
    this.session = undefined;
    this.attempt = undefined;
    this.stopStream();
    if (session !== undefined) {
      await this.deleteSession(session, options?.deadlineMillis ?? SHORT_DEADLINE_MILLIS);
    }
  }

  // ---- connecting -------------------------------------------------------------------------

  private established(budget: Budget): Promise<Session> {
    if (this.session !== undefined) return Promise.resolve(this.session);
    return this.join('detect', budget);
  }

  /**
   * The gateway's own headers for session-level traffic (endpoint.sessionHeaders), filtered as
   * a caller's are. Rejects with UpstreamFailure `credential` when they cannot be had.
   */
  private async ownHeaders(): Promise<Readonly<Record<string, string>>> {
    const provide = this.endpoint.sessionHeaders;
    if (provide === undefined) return {};
    try {
      return await provide();
    } catch (err) {
      throw new UpstreamFailure(
        'credential',
        `the gateway could not obtain its own credential for the upstream (${err instanceof Error ? err.message : 'unknown cause'})`,
      );
    }
  }

  /**
   * Replaces `stale` (its session gone, or its era wrong) unless another caller already did:
   * concurrent callers that hit the same 404 share one re-initialize.
   */
  private renew(stale: Session, how: 'initialize' | 'detect', budget: Budget): Promise<Session> {
    if (this.session === stale) {
      this.session = undefined;
      this.stopStream();
    }
    if (this.session !== undefined) return Promise.resolve(this.session);
    return this.join(how, budget);
  }

  /** Joins the attempt in flight, or starts one bounded by this caller's time left. */
  private join(how: 'initialize' | 'detect', budget: Budget): Promise<Session> {
    try {
      budget.check();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (this.attempt === undefined) {
      // The attempt is shared, so it does not end with this caller's signal; it keeps the
      // caller's time left, and each waiter races it against its own deadline and signal.
      const shared = new Budget(budget.millis, undefined, budget.left());
      const epoch = this.epoch;
      const attempt = this.ownHeaders()
        .then((headers) =>
          how === 'detect' ? this.detect(shared, headers) : this.initialize(shared, headers),
        )
        .then(async (session) => {
          await this.restoreLogLevel(session, shared);
          if (this.epoch === epoch) {
            this.session = session;
            this.startStream(session);
            this.installed++;
            if (this.installed > 1 && session.era === '2025') this.tellRenewed();
          } else {
            void this.deleteSession(session, SHORT_DEADLINE_MILLIS);
          }
          return session;
        })
        .finally(() => {
          if (this.attempt === attempt) this.attempt = undefined;
        });
      this.attempt = attempt;
    }
    return budget.race(this.attempt);
  }

  /** Era detection per endpoint.protocol (wire notes §1.3). */
  private async detect(
    budget: Budget,
    headers: Readonly<Record<string, string>> | undefined,
  ): Promise<Session> {
    const pinned = this.endpoint.protocol;
    if (pinned === LATEST_LEGACY_VERSION) return this.initialize(budget, headers);
    let version: string = FIRST_MODERN_VERSION;
    let retried = false;
    for (;;) {
      const verdict = await this.probe(version, budget, headers);
      switch (verdict.kind) {
        case 'modern':
          return verdict.session;
        case 'retry':
          if (retried)
            throw eraMismatch('the upstream refused the protocol version it had itself offered');
          retried = true;
          version = verdict.version;
          continue;
        case 'legacy':
          if (pinned === FIRST_MODERN_VERSION)
            throw eraMismatch(
              'the upstream did not offer the pinned protocol version 2026-07-28 via server/discover',
            );
          return this.initialize(budget, headers);
        case 'unsupported':
          throw eraMismatch(
            'the upstream offers only protocol versions this gateway does not speak',
          );
      }
    }
  }

  /** One `server/discover` for `version`, with the gateway's own headers; its verdict (era-probe.ts). */
  private async probe(
    version: string,
    budget: Budget,
    headers: Readonly<Record<string, string>> | undefined,
  ): Promise<ProbeVerdict> {
    const id = `server-discover-probe-${++this.probes}`;
    const reply = await tracedSessionRequest(this.endpoint.id, this.url, PROBE_METHOD, (trace) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: PROBE_METHOD,
        params: withEnvelope(this.endpoint, metaOf(trace), version),
      });
      // the era is not known yet: a request on the answer is answered as a 2025 one, sessionless
      return this.post(
        modernHeaders({ ...headers, ...trace }, version, PROBE_METHOD, undefined),
        body,
        id,
        budget,
        { context: {} },
      );
    });
    return probeVerdict(reply, version);
  }

  /** initialize (2025-11-25) then notifications/initialized; the session id may be absent. */
  private async initialize(
    budget: Budget,
    headers: Readonly<Record<string, string>> | undefined,
  ): Promise<Session> {
    const id = this.nextId++;
    const reply = await tracedSessionRequest(this.endpoint.id, this.url, 'initialize', (trace) =>
      this.post(
        headersFor({ ...headers, ...trace }),
        initializeBody(this.endpoint, id, metaOf(trace)),
        id,
        budget,
        { context: 'answer' },
      ),
    );
    const session = sessionFromInitialize(reply);
    const initialized = 'notifications/initialized';
    await tracedSessionRequest(this.endpoint.id, this.url, initialized, (trace) =>
      this.sendNotification(session, initialized, metaOf(trace), budget, { ...headers, ...trace }),
    );
    return session;
  }

  // ---- sending ----------------------------------------------------------------------------

  private async send2025(
    session: Session,
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
    budget: Budget,
  ): Promise<SendOutcome> {
    const id = this.nextId++;
    annotateRequest(id, session);
    // the session is every caller's: the upstream gets a progress token of the gateway's
    // (progress-token.ts)
    const own = ownProgressToken(params, id, options.onMessage);
    // a 2026 caller's envelope stays here: the session settled it at initialize, and a
    // dual-era server would read a request that carries it as a 2026 one (wire notes §2.0)
    const sent = withoutRequestEnvelope(own.params);
    const body = stringifyMessage({ jsonrpc: '2.0', id, method, ...(sent && { params: sent }) });
    let reply: Reply;
    try {
      reply = await this.post(legacyHeaders(options.headers, session), body, id, budget, {
        onMessage: own.onMessage,
        listCap: options.listCap,
        takeBytes: options.takeBytes,
        context: { sessionId: session.sessionId },
        credentialExpiresAtMs: options.credentialExpiresAtMs,
        notificationStream: options.notificationStream,
      });
    } catch (err) {
      // A 2025 server goes on working after a disconnect: tell it to stop (best effort).
      if (err instanceof UpstreamFailure && (err.kind === 'cancelled' || err.kind === 'timeout')) {
        const reason =
          err.kind === 'cancelled'
            ? reasonText(options.signal)
            : 'the gateway stopped waiting (deadline passed)';
        // never with a caller's credential that has expired since (docs/security.md
        // "Answers to relayed requests")
        const expired = credentialExpired(options.credentialExpiresAtMs);
        this.sendCancelled(session, id, reason, expired ? undefined : options.headers);
      }
      throw err;
    }
    if (reply.status === 404 && session.sessionId !== undefined)
      return { outcome: plainOutcome(reply), renew: 'session-lost' };
    const code = errorCode(reply);
    if (code !== undefined && MODERN_ONLY_CODES.has(code) && !isSuccess(reply.status))
      return { outcome: plainOutcome(reply), renew: 'wrong-era' };
    return { outcome: plainOutcome(reply) };
  }

  private async send2026(
    session: Session,
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
    budget: Budget,
  ): Promise<SendOutcome> {
    const id = this.nextId++;
    annotateRequest(id, session);
    // the upstream sees every caller as one client: a progress token of the gateway's
    // (progress-token.ts)
    const own = ownProgressToken(params, id, options.onMessage);
    const body = stringifyMessage({
      jsonrpc: '2.0',
      id,
      method,
      params: withEnvelope(
        this.endpoint,
        own.params,
        session.protocolVersion,
        options.clientCapabilities,
      ),
    });
    const headers = modernHeaders(
      options.headers,
      session.protocolVersion,
      method,
      mcpNameHeader(method, params),
    );
    // Closing the stream is the 2026 cancel signal: the exchange does that on abort.
    const reply = await this.post(headers, body, id, budget, {
      onMessage: own.onMessage,
      listCap: options.listCap,
      takeBytes: options.takeBytes,
      context: {},
      credentialExpiresAtMs: options.credentialExpiresAtMs,
      notificationStream: options.notificationStream,
    });
    const code = errorCode(reply);
    const legacyAnswer =
      reply.status === 405 ||
      ((reply.status === 400 || reply.status === 404) &&
        (code === JsonRpcCode.ServerError || code === JsonRpcCode.NotFound)) ||
      // a transport rejection (HTTP 400), not the answer of a request that ran (see above)
      (code === JsonRpcCode.UnsupportedProtocolVersion && !isSuccess(reply.status));
    return legacyAnswer
      ? { outcome: plainOutcome(reply), renew: 'wrong-era' }
      : { outcome: plainOutcome(reply) };
  }

  private async sendNotification(
    session: Session,
    method: string,
    params: Record<string, unknown> | undefined,
    budget: Budget,
    extra: Readonly<Record<string, string>> | undefined,
  ): Promise<void> {
    const modern = session.era === '2026';
    const sentParams = modern
      ? withEnvelope(this.endpoint, params, session.protocolVersion)
      : withoutRequestEnvelope(params);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      method,
      ...(sentParams && { params: sentParams }),
    });
    const headers = modern
      ? modernHeaders(extra, session.protocolVersion, method, undefined)
      : legacyHeaders(extra, session);
    // nobody waits on a notification's answer: a request on it belongs to no caller
    const reply = await this.post(headers, body, undefined, budget, {
      context: { sessionId: session.sessionId },
    });
    checkAccepted(reply, session.sessionId);
  }

  private sendCancelled(
    session: Session,
    requestId: number,
    reason: string,
    extra: Readonly<Record<string, string>> | undefined,
  ): void {
    const budget = new Budget(SHORT_DEADLINE_MILLIS);
    this.sendNotification(
      session,
      'notifications/cancelled',
      { requestId, reason },
      budget,
      extra,
    ).catch(() => undefined);
  }

  /**
   * One POST, its answer read: for a request (`id`), the response to it from a JSON body or
   * an SSE stream. With `relay`, every other message on an SSE answer (a notification's: every
   * message) is seen by `answerMessage`, in order.
   */
  private async post(
    headers: Record<string, string>,
    body: string,
    id: RequestId | undefined,
    budget: Budget,
    relay?: Relay,
  ): Promise<Reply> {
    budget.check();
    let response: ParsedMessage | undefined;
    const cap = relay?.listCap;
    const counter = cap === undefined ? undefined : new ListItemCounter(cap.key, cap.limit);
    let context: UpstreamMessageContext = relay?.context === 'answer' ? {} : (relay?.context ?? {});
    const stream = relay?.notificationStream === true;
    // After a request's response its stream may still carry a `ping` or a request in the grace
    // it is given to end: the call has ended, so they belong to no caller and are answered so,
    // never relayed to it (docs/operations.md §10 "Relaying"); a list_changed is still seen.
    const onLateEvent: ExchangeRequest['onLateEvent'] =
      id === undefined
        ? undefined
        : (event) => {
            const message = readStreamMessage(event.data);
            if (message !== undefined)
              this.answerMessage(message, { context: relay?.context ?? {} }, context);
          };
    const onEvent: ExchangeRequest['onEvent'] =
      id === undefined
        ? relay === undefined
          ? undefined
          : (event) => {
              // a notification's answer holds no response: a message that cannot be read is
              // dropped, as on the GET stream, and the notification stays accepted
              const message = readStreamMessage(event.data);
              if (message !== undefined) this.answerMessage(message, relay, context);
              return 'more';
            }
        : (event) => {
            // every message on the answer, the response or not, is refused unparsed; on a
            // listen a bad notification is dropped instead (readAnswerEvent)
            const parsed = readAnswerEvent(event.data, relay?.listCap, stream);
            if (parsed === undefined) {
              this.dropped.count();
              return 'more';
            }
            const { message } = parsed;
            if (isResponseTo(message, id)) {
              response = parsed;
              return 'done';
            }
            if (relay !== undefined) this.answerMessage(message, relay, context);
            return 'more';
          };
    const take = relay?.takeBytes;
    const onChunk: ExchangeRequest['onChunk'] =
      take === undefined && (counter === undefined || cap === undefined)
        ? undefined
        : (chunk) => {
            if (take !== undefined && !take(chunk.length)) return ANSWER_BUDGET_REFUSAL;
            return counter !== undefined && cap !== undefined && counter.exceeds(chunk)
              ? cap.refusal
              : undefined;
          };
    const first = await exchange(this.dispatcher, {
      via: this.endpoint.via,
      url: this.url,
      method: 'POST',
      headers,
      body,
      timeoutMillis: budget.left(),
      timeoutScope: 'whole',
      deadlineMillis: budget.millis,
      connectMillis: this.endpoint.connectMillis,
      maxBytes: this.endpoint.maxAnswerBytes,
      // a listen is a stream of notifications, each capped as on the GET stream; any other
      // answer is one answer, capped whole (docs/security.md "Bytes")
      capScope: stream ? 'event' : 'total',
      signal: budget.signal,
      // initialize: a request on its answer is answered on the session that answer opens
      onHead:
        relay?.context === 'answer'
          ? (head) => {
              context = { sessionId: validSessionId(head.sessionId) };
            }
          : undefined,
      onChunk,
      onEvent,
      onLateEvent,
    });
    // a request whose stream ended before its response may be resumed (resumeStream)
    const result =
      id !== undefined && response === undefined && onEvent !== undefined
        ? await this.resumeStream(first, headers, budget, {
            onEvent,
            onLateEvent,
            onChunk,
            credentialExpiresAtMs: relay?.credentialExpiresAtMs,
            perEvent: stream,
          })
        : first;
    return readReply(result, id, response, relay?.listCap);
  }

  /**
   * A request's SSE answer that ended before the response, after the upstream set an event id:
   * the upstream closed the stream on purpose (SSE polling, SEP-1699; MCP 2025-11-25 Streamable
   * HTTP, "Resumability and Redelivery") and the rest comes on a GET with `Last-Event-ID`,
   * after the stream's `retry:` ms. Resumed within the call's deadline, with the call's own
   * headers (it is still that caller's request), as often as each GET brings new events; a
   * GET answered without a stream (405, 404) leaves the answer as it was: ended without the
   * response. The answer is one answer across its resumptions: `maxAnswerBytes` and a list's
   * item cap (`onChunk`) count every GET's bytes with the first stream's, and `retry:` is
   * waited at least RESUME_MIN_WAIT_MILLIS (docs/security.md, "Hostile upstreams"). A listen
   * (`perEvent`) is a stream of notifications, not one answer: each event is capped, as on its
   * first stream, and the bytes do not add up.
   */
  private async resumeStream(
    first: ExchangeResult,
    headers: Record<string, string>,
    budget: Budget,
    read: {
      readonly onEvent: NonNullable<ExchangeRequest['onEvent']>;
      readonly onLateEvent: ExchangeRequest['onLateEvent'];
      readonly onChunk: ExchangeRequest['onChunk'];
      readonly credentialExpiresAtMs: number | undefined;
      readonly perEvent: boolean;
    },
  ): Promise<ExchangeResult> {
    const { onEvent, onLateEvent, onChunk, credentialExpiresAtMs, perEvent } = read;
    let result = first;
    let fruitless = 0;
    const maxBytes = this.endpoint.maxAnswerBytes;
    let taken = first.kind === 'events' ? first.bytes : 0;
    while (
      result.kind === 'events' &&
      !result.done &&
      result.lastEventId !== undefined &&
      isSuccess(result.head.status) &&
      fruitless < RESUME_FRUITLESS_MAX
    ) {
      const { lastEventId, retryMillis } = result;
      const wait = Math.min(
        Math.max(retryMillis ?? RESUME_DEFAULT_WAIT_MILLIS, RESUME_MIN_WAIT_MILLIS),
        RESUME_MAX_WAIT_MILLIS,
      );
      if (wait >= budget.left()) break;
      if (!perEvent && taken >= maxBytes) throw answerTooLarge(maxBytes);
      await budget.race(delay(wait));
      // the GET carries the caller's headers: not once its credential has expired (the answer
      // then ends without the response, as when the upstream cannot resume)
      if (credentialExpired(credentialExpiresAtMs)) break;
      let next: ExchangeResult;
      try {
        next = await exchange(this.dispatcher, {
          via: this.endpoint.via,
          url: this.url,
          method: 'GET',
          headers: resumeHeaders(headers, lastEventId),
          timeoutMillis: budget.left(),
          timeoutScope: 'whole',
          deadlineMillis: budget.millis,
          connectMillis: this.endpoint.connectMillis,
          maxBytes: perEvent ? maxBytes : maxBytes - taken,
          capScope: perEvent ? 'event' : 'total',
          signal: budget.signal,
          onChunk,
          // a replayed priming event: the v1 SDK's event stores keep it as `{}` and may replay it
          onEvent: (event) => (event.data.trim() === '{}' ? 'more' : onEvent(event)),
          onLateEvent,
        });
      } catch (err) {
        // the cap is the whole answer's, not what was left of it for this GET
        if (err instanceof UpstreamFailure && err.kind === 'too-large')
          throw answerTooLarge(maxBytes);
        // the request itself was sent and taken (its stream began): a GET that could not
        // connect or be sent says nothing of whether it ran, so the caller is told it may have
        // (docs/operations.md §10 "Routing"), never that it was not sent
        if (err instanceof UpstreamFailure && !err.mayHaveRun)
          throw new UpstreamFailure(
            err.kind,
            `its answer stream could not be resumed: ${err.message}`,
            err.status,
            true,
          );
        throw err;
      }
      if (next.kind !== 'events') break;
      taken += next.bytes;
      const moved = next.lastEventId !== undefined && next.lastEventId !== lastEventId;
      fruitless = moved ? 0 : fruitless + 1;
      result = {
        ...next,
        lastEventId: next.lastEventId ?? lastEventId,
        retryMillis: next.retryMillis ?? retryMillis,
      };
    }
    return result;
  }

  /**
   * A message on a POST's SSE answer that is not the response: a server request that belongs
   * to no caller (no `onMessage`: a pull's answer, the gateway's own session-level requests)
   * is answered at once, a list_changed is emitted, the rest goes to `relay.onMessage`.
   */
  private answerMessage(
    message: JsonRpcMessage,
    relay: Relay,
    context: UpstreamMessageContext,
  ): void {
    if (this.answerServerRequest(message, context, relay.onMessage !== undefined)) return;
    // seen here as on the GET stream: that upstream is pulled again (docs/operations.md §10, Lists)
    if (isListChanged(message)) this.emit(message, context);
    if (relay.onMessage === undefined) return;
    try {
      relay.onMessage(message, context);
    } catch {
      // The caller's listener must not break the stream.
    }
  }

  // ---- the 2025 standalone GET stream and DELETE ------------------------------------------

  private startStream(session: Session): void {
    this.stopStream();
    if (session.era !== '2025') return;
    const stream = new StandaloneStream(session, {
      url: this.url,
      dispatcher: this.dispatcher,
      endpoint: this.endpoint,
      ownHeaders: () => this.ownHeaders(),
      // a request here belongs to no caller: answered at once, never emitted
      deliver: (message, context) => {
        if (this.stream === stream && !this.answerServerRequest(message, context, false))
          this.emit(message, context);
      },
      dropped: () => {
        if (this.stream === stream) this.streamDropped.count();
      },
      failed: (reason, reopenMillis) => {
        if (this.stream !== stream) return;
        const id = this.endpoint.id;
        this.streamFailures.note(
          '',
          (count) =>
            `Upstream ${id}: its GET stream failed (${reason}); re-opening it in ${reopenMillis} ms` +
            (count > 1
              ? ` (the last of ${count} failures since the previous such line; at most one a minute)`
              : ''),
        );
      },
    });
    this.stream = stream;
    stream.start();
  }

  private stopStream(): void {
    this.stream?.stop();
    this.stream = undefined;
  }

  /**
   * Answers at once, with the gateway's own credential, a server request that is not a
   * caller's: a `ping`, on any stream (it must be answered and is never the caller's business,
   * B08), and, when nobody `owned` the stream it came on (the GET stream, a pull's answer,
   * the answer to the era probe, initialize or a notification), any other request with -32601:
   * JSON-RPC requires an answer, and no client can be asked (docs/security.md, "Credentials
   * towards sources"). On the session of `context`: initialize's is the one its answer opens.
   * A 2026-07-28 upstream's requests, a caller's stream's too, are dropped instead (that revision has no client
   * responses). true when it answered or dropped it.
   */
  private answerServerRequest(
    message: JsonRpcMessage,
    context: UpstreamMessageContext,
    owned: boolean,
  ): boolean {
    const id = requestIdOf(message);
    if (id === undefined) return false;
    // 2026-07-28 has no server->client requests and no client responses (wire notes §1.2; MRTR's
    // input_required replaces them): its requests are dropped unanswered, never queued as
    // answers owed (nor counted as ones the queue could not hold; docs/security.md "What an
    // upstream can make the gateway do"), and never reach a caller, on a call's own answer
    // too: relayed, or made into a 2026 client's input_required, nobody could ever answer them,
    // and the response that follows would be lost. Before the era is known (the probe's own
    // answer) a request is answered as a 2025 one.
    if (this.session?.era === '2026') return true;
    const ping = message.method === 'ping';
    if (!ping && owned) return false;
    const response: JsonRpcMessage = ping
      ? { jsonrpc: '2.0', id, result: {} }
      : {
          jsonrpc: '2.0',
          id,
          error: {
            code: JsonRpcCode.MethodNotFound,
            message:
              'Method not found: the gateway serves no client requests outside a call; this request belongs to no caller',
          },
        };
    this.unowned.send(() =>
      this.ownHeaders().then((headers) =>
        this.respond(response, context.sessionId, {
          deadlineMillis: SHORT_DEADLINE_MILLIS,
          headers,
        }),
      ),
    );
    return true;
  }

  private emit(message: JsonRpcMessage, context: UpstreamMessageContext): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(message, context);
      } catch {
        // One listener's failure must not stop the stream or the others.
      }
    }
  }

  /** DELETEs a 2025 session with the gateway's own credential; best effort, never rejects. */
  private async deleteSession(session: Session, deadlineMillis: number): Promise<void> {
    if (session.era !== '2025' || session.sessionId === undefined) return;
    try {
      const headers = sessionLevelHeaders(
        await this.ownHeaders(),
        session,
        'application/json, text/event-stream',
      );
      await exchange(this.dispatcher, {
        via: this.endpoint.via,
        url: this.url,
        method: 'DELETE',
        headers,
        timeoutMillis: deadlineMillis,
        timeoutScope: 'whole',
        deadlineMillis,
        connectMillis: this.endpoint.connectMillis,
        maxBytes: this.endpoint.maxAnswerBytes,
        capScope: 'total',
      });
    } catch {
      // Best effort: the upstream expires the session on its own.
    }
  }
}

/**
 * The request's id and the session's protocol version on its CLIENT span, when traced (the
 * OpenTelemetry MCP conventions' `jsonrpc.request.id`, `mcp.protocol.version`; a retry after a
 * lost session or a changed era writes the ones it was sent with). Not the upstream's session
 * id: anyone who reads traces could use it.
 */
function annotateRequest(id: number, session: Session): void {
  if (!tracedHere()) return;
  annotateSpan({
    'jsonrpc.request.id': String(id),
    'mcp.protocol.version': session.protocolVersion,
  });
}
