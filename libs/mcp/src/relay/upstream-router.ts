import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  Extension,
  isModernVersion,
  JsonRpcCode,
  logRank,
  MetaKey,
  methodRow,
  undeclaredBy,
  unknownResultType,
} from '@app/wire';
import type { UpstreamDefinition } from '@app/config';
import { UpstreamExecutor, type CallCancellation, type UpstreamOutcome } from '@app/execution';
import { CatalogRefresh, RegistryService } from '@app/registry';
import { GatewayMetrics, ThrottledLines } from '@app/observability';
import type { JsonRpcMessage, UpstreamMessageContext } from '@app/upstream';
import { ForwardedError } from '../errors/gateway-error';
import { asksUrlElicitation } from '../errors/wire-errors';
import { answerBinding, type AnswerDelivery } from './answer-binding';
import { RelayIds } from './relay-ids';
import {
  asLegacyResult,
  hasModernResultMembers,
  legacyResultText,
  withoutModernResultMembers,
} from './legacy-result';
import { SerializedResult, type MethodContext } from '../methods/method-handler';
import { SessionLogLevels } from '../session/session-log-levels';
import { TAKE_ONCE, type TakeOnce } from './take-once';

const LOG_MESSAGE = 'notifications/message';
const PROGRESS = 'notifications/progress';
/** Relayed requests answered or ended that one replica remembers (UpstreamRouter.settledRequests). */
const ENDED_REMEMBERED = 10_000;
/** Requests relayed per call whose answer's failure ends the call (bounds awaitingAnswers). */
const MAX_TRACKED_REQUESTS = 32;
/**
 * Requests of one call the gateway refuses to the upstream (past MAX_TRACKED_REQUESTS, a method
 * no client serves, a client that cannot be asked), each refusal a POST to the upstream: past
 * this many the call is ended (`input-overflow`) and later ones are not answered, so one call
 * cannot make the gateway send thousands of POSTs through the pool every caller shares.
 */
const MAX_REFUSED_REQUESTS = 32;
/** Log floors: every message passes; none does (above emergency). */
const ALL_LOGS = 0;
const NO_LOGS = Number.POSITIVE_INFINITY;
/** The longest delay setTimeout keeps (2^31 - 1 ms, ~24.8 days); a longer one fires at once. */
const MAX_TIMER_MILLIS = 2_147_483_647;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> {
  return isRecord(params?._meta) ? params._meta : {};
}

/**
 * Whether an upstream's message other than a request on a call's answer goes on to the client
 * (docs/operations.md §10 "Relaying"): `notifications/progress` with the client's own token, and
 * `notifications/message` at or above the level this client asked for (the upstream's session
 * may be another client's level). Nothing else: a response there answers no request of this
 * client (a client matches responses by id, whatever stream they come on, so one would answer
 * another of its calls, to another upstream, with this upstream's words), and any other
 * notification (a list change, an update, a cancellation) is not this call's.
 */
function relayable(message: JsonRpcMessage, progressToken: unknown, logFloor: number): boolean {
  switch (message.method) {
    case PROGRESS:
      return (
        progressToken !== undefined &&
        typeof message.params === 'object' &&
        message.params !== null &&
        (message.params as { progressToken?: unknown }).progressToken === progressToken
      );
    case LOG_MESSAGE:
      return (logRank(levelOf(message)) ?? 0) >= logFloor;
    default:
      return false;
  }
}

/**
 * What a later request of a 2026 client gets of the messages a call it resumes sends (a parked
 * call's retry, docs/operations.md §11 "Multi round-trip and era bridging"): the call's
 * progress under this request's own token (none without one), its log messages at this
 * request's own level. What the request that started the call was relayed passed its checks
 * already (relayable).
 */
export function resumingRequestRelay(
  relay: (message: object) => void,
  params: Record<string, unknown>,
): (message: JsonRpcMessage) => void {
  const meta = metaOf(params);
  const progressToken = meta.progressToken;
  const logFloor = logRank(meta[MetaKey.logLevel]) ?? NO_LOGS;
  return (message) => {
    if (message.method === PROGRESS) {
      if (progressToken !== undefined && isRecord(message.params))
        relay({ ...message, params: { ...message.params, progressToken } });
    } else if (message.method === LOG_MESSAGE) {
      if ((logRank(levelOf(message)) ?? 0) >= logFloor) relay(message);
    }
  };
}

function levelOf(message: JsonRpcMessage): unknown {
  return isRecord(message.params) ? message.params.level : undefined;
}

/**
 * The client's capabilities as an upstream gets them: the Tasks extension only where the client
 * can use a task (docs/operations.md §10 "Tasks"): declared by a 2026 request as the extension
 * says (an object). A 2025 client (no tasks/* here) or a malformed declaration would have the
 * upstream create a task nobody can reach. The same object when there is nothing to take out.
 */
function forwardedCapabilities(
  capabilities: Readonly<Record<string, unknown>> | undefined,
  modern: boolean,
): Readonly<Record<string, unknown>> | undefined {
  const extensions = capabilities?.extensions;
  if (!isRecord(extensions) || !(Extension.tasks in extensions)) return capabilities;
  if (modern && isRecord(extensions[Extension.tasks])) return capabilities;
  const { [Extension.tasks]: _dropped, ...rest } = extensions;
  return { ...capabilities, extensions: rest };
}

/**
 * Takes over an upstream's request to the client during a forwarded call
 * (docs/operations.md §11 "Multi round-trip and era bridging"); true when it did (it then answers
 * the upstream itself), false for the default relay or refusal.
 */
export type UpstreamRequestHook = (
  message: JsonRpcMessage,
  origin: UpstreamMessageContext,
) => boolean;

/** What a forward may add to the request beyond its method and params. */
export interface ForwardOptions {
  /** Headers of this request only (a 2026 upstream's `Mcp-Param-*`, docs/operations.md §11 "Checks"). */
  readonly requestHeaders?: Readonly<Record<string, string>>;
  /** Era bridging's take-over of the upstream's requests to the client (MrtrCalls). */
  readonly onRequest?: UpstreamRequestHook;
  /**
   * The end of the call this request is one round of (`performance.now()` time): a bridged call's
   * rounds share the upstream's one `callMillis` (docs/operations.md §11 "Multi round-trip and era bridging").
   */
  readonly deadlineAt?: number;
}

/**
 * After a failure that may have let the tool run (UpstreamOutcome.mayHaveRun): what a Tool
 * Service's call says in the same case (map-tool-response.ts), so an agent does not run a tool
 * that changes data twice on either kind of source.
 */
export const MAY_HAVE_RUN_ADVICE =
  'It may still have run on the upstream; check before retrying a tool that changes data.';

/** A failure (timeout, unreachable, …) of a tool call: a tool execution error the model can read (MCP 2025-11-25 "Error Handling"). */
function toolFailure(message: string): object {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * Methods an upstream may send to the client mid-request, relayed, and the capability each needs
 * (docs/operations.md §10 "Relaying").
 */
export const RELAYED_REQUESTS: ReadonlyMap<string, string> = new Map([
  ['sampling/createMessage', 'sampling'],
  ['elicitation/create', 'elicitation'],
  ['roots/list', 'roots'],
]);

/**
 * Sends a request on to the upstream that owns it and turns its answer into this gateway's
 * (docs/operations.md §10 "Routing"): a result unchanged but for a 2026 upstream's envelope members
 * (asLegacyResult; a result that keeps all its members is passed on as the upstream's own
 * text, a SerializedResult), a JSON-RPC error with its own code, message and data, a
 * failure (timeout, unreachable, …) of `tools/call` as an isError result and of any other method
 * as -32603. This is the one forwarder of upstream requests: the handlers and MrtrCalls' rounds
 * give it their requests, and the upstream's outcome is mapped to the wire here only. While the
 * request runs, the upstream's notifications go to the client's SSE answer as they are, and its
 * requests to the client go there under a sealed relay id (RelayIds); without an SSE answer, such
 * a request is refused at once so the upstream does not wait for nothing.
 */
@Injectable()
export class UpstreamRouter {
  private readonly logger = new Logger('Mcp');
  /**
   * Answers are not requests (no rate limit counts them): the lines about answers dropped are
   * counted per kind and upstream, the first at once, then at most once a minute
   * (docs/operations.md §4 "What outsiders can make the gateway log").
   */
  private readonly answerLines = new ThrottledLines((line) => this.logger.warn(line));
  /**
   * The calls in flight whose upstream asked their client something, by the request asked
   * (awaitingKey): a client's answer the upstream does not take ends the call at once.
   */
  private readonly awaitingAnswers = new Map<string, CallCancellation>();
  /**
   * Requests answered here, or whose call ended here before the client answered (endRelayed
   * answered them to the upstream): a client's answer that comes later is refused (400), at most
   * ENDED_REMEMBERED of them, the oldest forgotten first (its relay id expires anyway).
   */
  private readonly settledRequests = new Set<string>();

  constructor(
    private readonly executor: UpstreamExecutor,
    private readonly relayIds: RelayIds,
    private readonly registry: RegistryService,
    private readonly logLevels: SessionLogLevels,
    private readonly refresh: CatalogRefresh,
    // where a relayed request is taken once across the replicas (InputHandoff's SET NX)
    @Optional()
    @Inject(TAKE_ONCE)
    private readonly once: TakeOnce | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  /**
   * @returns the upstream's result; throws ForwardedError for its JSON-RPC error; a failure is
   *   a tool call's isError result, for any other method a -32603 ForwardedError
   */
  async forward(
    upstream: UpstreamDefinition,
    method: string,
    params: Record<string, unknown> | undefined,
    context: MethodContext,
    options: ForwardOptions = {},
  ): Promise<object> {
    const { requestHeaders, onRequest, deadlineAt } = options;
    // what the client asked to be logged (docs/operations.md §10 "Logging"): a 2026 request's
    // own logLevel (none: no log messages), a 2025 session's setLevel (none: all), which a 2026
    // upstream gets in the request's _meta
    const modern = isModernVersion(context.protocolVersion);
    const known = modern ? undefined : this.logLevels.get(context.sessionId);
    // a promise only when Redis is asked (docs/operations.md §10 "Logging")
    const sessionLevel = known instanceof Promise ? await known : known;
    const logFloor = modern
      ? (logRank(metaOf(params)[MetaKey.logLevel]) ?? NO_LOGS)
      : (logRank(sessionLevel) ?? ALL_LOGS);
    const sent =
      sessionLevel === undefined
        ? params
        : { ...params, _meta: { ...metaOf(params), [MetaKey.logLevel]: sessionLevel } };
    // the client's own token: the only progress relayed to it (relayable)
    const progressToken = metaOf(params).progressToken;
    // the requests this call relayed whose answers may end it (awaitingAnswers), when any
    let relayed: RelayedRequest[] | undefined;
    const refusals = { count: 0 };
    // ends the call when its 2025 session expires while a request it relayed awaits its answer
    let sessionExpiry: ReturnType<typeof setTimeout> | undefined;
    let outcome: UpstreamOutcome;
    try {
      outcome = await this.executor.forward(upstream, method, sent, {
        headers: context.headers,
        requestHeaders,
        signal: context.signal,
        clientCapabilities: forwardedCapabilities(context.clientCapabilities, modern),
        caller: context.caller,
        clientEra: isModernVersion(context.protocolVersion) ? '2026' : '2025',
        deadlineAt,
        onMessage: (message, origin) => {
          if (relayed !== undefined && this.relayFollowUp(message, origin, relayed, context))
            return;
          const request = this.relay(
            upstream,
            message,
            origin,
            context,
            onRequest,
            logFloor,
            progressToken,
            (relayed?.length ?? 0) >= MAX_TRACKED_REQUESTS,
            refusals,
          );
          const call = context.signal;
          if (request !== undefined && call !== undefined) {
            (relayed ??= []).push(request);
            this.awaitingAnswers.set(request.key, call);
            const expiresAt = context.sessionExpiresAtMs;
            if (expiresAt !== undefined && sessionExpiry === undefined) {
              const left = expiresAt - Date.now();
              const tracked = relayed;
              if (left <= 0) void this.endAtSessionExpiry(tracked, call);
              else if (left <= MAX_TIMER_MILLIS) {
                sessionExpiry = setTimeout(() => {
                  sessionExpiry = undefined;
                  void this.endAtSessionExpiry(tracked, call);
                }, left);
                sessionExpiry.unref();
              }
            }
          }
        },
      });
    } finally {
      if (sessionExpiry !== undefined) clearTimeout(sessionExpiry);
      if (relayed !== undefined) this.endRelayed(upstream, relayed, context);
    }
    // A 2025 result has no resultType, inputRequests or requestState (wire notes §2): members
    // of those names are the upstream's own, never a 2026 result type, round or task; its answer
    // is complete (withoutModernResultMembers)
    if (
      outcome.kind === 'result' &&
      outcome.era === '2025' &&
      hasModernResultMembers(outcome.result)
    )
      outcome = {
        kind: 'result',
        era: outcome.era,
        ...withoutModernResultMembers(outcome.result, outcome.resultText),
      };
    switch (outcome.kind) {
      case 'result': {
        // MCP 2026-07-28 "ResultType": a value the client does not recognise makes the answer
        // invalid (RESULT_TYPES); passed on, a 2025 client would take it for a success
        const unknown = unknownResultType(outcome.result);
        if (unknown !== undefined)
          throw new ForwardedError(
            JsonRpcCode.InternalError,
            `Upstream ${upstream.id} answered ${method} with resultType ${unknown}, which the gateway does not know: the answer is invalid`,
          );
        // A task is handed out for a tools/call only (UpstreamTasks.handOut, with the client's
        // id; docs/operations.md §10 "Tasks"): one answered to any other request would reach
        // the client with the upstream's own id, which no tasks/get here can follow.
        if (
          outcome.result.resultType === 'task' &&
          method !== 'tools/call' &&
          !method.startsWith('tasks/')
        )
          throw new ForwardedError(
            JsonRpcCode.InternalError,
            `Upstream ${upstream.id} answered ${method} with a task: the gateway relays an upstream's tasks for tools/call only`,
          );
        // input_required is an answer of tools/call, prompts/get and resources/read only (MCP
        // 2026-07-28 multi round-trip requests; MrtrCalls and LegacyInputBridge take it there):
        // another method's would reach the client with the upstream's own requestState unsealed
        if (
          outcome.result.resultType === 'input_required' &&
          methodRow(method)?.inputRequired !== true
        )
          throw new ForwardedError(
            JsonRpcCode.InternalError,
            `Upstream ${upstream.id} answered ${method} with input_required, which only tools/call, prompts/get and resources/read may answer`,
          );
        const result = asLegacyResult(outcome.result, method.startsWith('tasks/'));
        // Passed on as the upstream wrote it, not serialized again: as it came, or with the
        // members the projection left out cut from its text (legacyResultText). A line break,
        // JSON whitespace, could not go in one SSE data line: serialized then (`includes`, not a
        // RegExp, which is ~30x slower on a long text).
        const text =
          outcome.resultText === undefined
            ? undefined
            : legacyResultText(outcome.resultText, outcome.result, result);
        const passOn = text !== undefined && !text.includes('\n') && !text.includes('\r');
        // a read's own cache hints, which the projection left out, go on beside it; a 2025
        // upstream sends none (wire notes §3): members of those names are its own, not hints
        const hints =
          method === 'resources/read' && outcome.era !== '2025'
            ? readHintsOf(outcome.result)
            : undefined;
        if (passOn) return new SerializedResult(text, result, hints);
        return hints === undefined
          ? result
          : new SerializedResult(JSON.stringify(result), result, hints);
      }
      case 'error':
        // -32602 from an upstream for a tool it listed: its lists are stale
        // (docs/operations.md §10 "Routing"). Refreshed as for a miss (throttled alike), without
        // holding the error back.
        if (outcome.code === JsonRpcCode.InvalidParams && method === 'tools/call')
          void this.refresh.refreshForUnknownTool();
        // -32042 is a 2025-only code: a 2026 client is asked to open the URL by input_required
        // where the method allows one (MrtrCalls); elsewhere it learns why in words. A 2026
        // upstream's -32042 is no such request (its revision defines no -32042, wire notes §5)
        if (
          asksUrlElicitation(outcome.code, outcome.era) &&
          modern &&
          methodRow(method)?.inputRequired !== true
        )
          throw new ForwardedError(
            JsonRpcCode.InternalError,
            `Upstream ${upstream.id} needs the client to open a URL first (${outcome.message.slice(0, 200)}), which ${method} cannot ask a 2026-07-28 client`,
          );
        throw new ForwardedError(outcome.code, outcome.message, outcome.data, outcome.era);
      case 'failed':
        if (method === 'tools/call')
          return toolFailure(
            outcome.mayHaveRun
              ? `${outcome.message.replace(/\.$/, '')}. ${MAY_HAVE_RUN_ADVICE}`
              : outcome.message,
          );
        throw new ForwardedError(JsonRpcCode.InternalError, outcome.message);
    }
  }

  /**
   * An answer to an upstream's request, from the gateway on the caller's behalf (era bridging,
   * MrtrCalls): posted to the upstream session that asked, with the caller's own credential — a
   * tokenExchange upstream takes the answer only with the token exchanged for this caller, as it
   * takes the call (docs/security.md "Side paths at a glance").
   */
  respond(
    upstream: UpstreamDefinition,
    sessionId: string | undefined,
    response: JsonRpcMessage,
    context: MethodContext,
  ): Promise<boolean> {
    return this.executor.respond(upstream, sessionId, response, context.headers, context.caller);
  }

  /**
   * The client's answer to a relayed request: posted to the upstream session that asked, the
   * upstream found among the enabled ones, configured or registered at runtime
   * (docs/operations.md §15). `not-ours` when the id is not of the relay form; `foreign` when it is
   * but does not open (forged, another gateway identity's); `other-caller` when it was issued to
   * another caller or grant and `expired` when too late: none of these reaches the upstream
   * (docs/security.md "Answers to relayed requests"). An answer for an upstream no longer enabled
   * is dropped with a warn line.
   */
  async deliverAnswer(message: JsonRpcMessage, context: MethodContext): Promise<AnswerDelivery> {
    const opened = this.relayIds.open(
      message.id,
      answerBinding(context.caller, context.access, context.sessionId),
    );
    if (opened === undefined) return 'not-ours';
    if (opened.kind !== 'origin') {
      const kind = opened.kind;
      this.answerLines.note(kind, (count) =>
        count === 1
          ? `A client's answer to a relayed request was refused (${kind}); dropped`
          : `${count} clients' answers to relayed requests were refused (${kind}) since the last line; dropped`,
      );
      return opened.kind;
    }
    const { origin } = opened;
    // the upstream that asked: the same registration (docs/operations.md §15 "Deleted means
    // gone"), never one registered under its id since
    const upstream = this.registry
      .enabledUpstreams()
      .find((u) => u.id === origin.upstream && u.registration === origin.registration);
    if (upstream === undefined) {
      this.answerLines.note(`gone\u0000${origin.upstream}`, (count) =>
        count === 1
          ? `Upstream ${origin.upstream}: the client's answer arrived after the upstream was removed, replaced or disabled; dropped`
          : `Upstream ${origin.upstream}: ${count} clients' answers arrived after the upstream was removed, replaced or disabled since the last line; dropped`,
      );
      return 'delivered';
    }
    const key = awaitingKey(upstream, origin.session, origin.id);
    // One answer per request: a repeat of it (a client retrying, a replay, the same answer sent
    // to two replicas at once) is refused as one whose call has ended, never posted to the
    // upstream again; so is an answer whose call ended first, here or on the replica that
    // relayed it, which told the upstream (endRelayed). Taken here before anything is awaited
    // (a repeat racing it on this replica loses), then on every replica at once with one
    // atomic SET NX in Redis (takeOnce), never a read and a later write, which two replicas
    // both pass. Redis not answering (or none): this replica decides alone.
    if (this.settledRequests.has(key)) return 'not-waited';
    this.rememberEnded(key, false);
    if ((await this.takeOnce(key)) === false) return 'not-waited';
    const delivered = await this.executor.respond(
      upstream,
      origin.session,
      { ...message, id: origin.id },
      context.headers,
      context.caller,
    );
    // answered: the call's end has nothing to tell the upstream about it (endRelayed)
    if (delivered) this.awaitingAnswers.delete(key);
    else {
      // the upstream waits for this answer and never gets it: the call it belongs to ends now
      // (here, on the replica that relayed the request) instead of at the upstream's timeout
      const call = this.awaitingAnswers.get(key);
      this.answerLines.note(`undelivered\u0000${upstream.id}`, (count) =>
        count === 1
          ? `Upstream ${upstream.id}: the client's answer could not be delivered` +
            (call === undefined ? '' : '; the call that asked for it was ended')
          : `Upstream ${upstream.id}: ${count} clients' answers could not be delivered since the last line; the calls that asked for them were ended`,
      );
      call?.abort('answer-undelivered');
    }
    return 'delivered';
  }

  /**
   * A relayed request that needs no answer any more (answered, or its call ended): a client's
   * answer to it that comes later is refused, here and, through Redis for as long as its relay
   * id opens, on the other replicas (`shared` false: deliverAnswer takes it there itself).
   */
  private rememberEnded(key: string, shared = true): void {
    this.settledRequests.add(key);
    if (this.settledRequests.size > ENDED_REMEMBERED)
      this.settledRequests.delete(this.settledRequests.values().next().value as string);
    if (shared) void this.takeOnce(key);
  }

  /**
   * Takes the relayed request `key` on every replica (TakeOnce: InputHandoff's SET NX, which
   * spends `requestState` envelopes too): false when another replica took it first (its
   * answer delivered there, or its call ended there); undefined without Redis or when Redis did
   * not answer. While Redis is away (no connection) it is not waited for: the caller's answer
   * goes on at once, decided by this replica alone (docs/operations.md §10 "Relaying").
   */
  private takeOnce(key: string): Promise<boolean | undefined> {
    return (
      this.once?.takeOnce(endedKey(key), this.relayIds.ttlMillis, false) ??
      Promise.resolve(undefined)
    );
  }

  /**
   * The 2025 session of a call expired (mcp.session.ttlSeconds): an answer to a request it
   * relayed can no longer come (its POST is 404, docs/operations.md §9 "Ending a session"), so a
   * call still waiting for one is ended (`session-expired`), its upstream request cancelled.
   * A request answered meanwhile on another replica does not count: each awaited one is taken
   * once across the replicas first (takeOnce, as an answer takes it), so an answer that got
   * there first keeps the call going, and one that comes later is refused. A call none of whose
   * requests awaits an answer goes on: its result still reaches the stream it is written to.
   */
  private async endAtSessionExpiry(
    relayed: readonly RelayedRequest[],
    call: CallCancellation,
  ): Promise<void> {
    const awaited = relayed.filter((r) => this.awaitingAnswers.has(r.key));
    if (awaited.length === 0 || call.aborted) return;
    const taken = await Promise.all(awaited.map((r) => this.takeOnce(r.key)));
    if (!taken.some((t) => t !== false) || call.aborted) return;
    call.abort('session-expired');
    this.metrics?.sessionCallsEnded('expired');
  }

  /**
   * The call is over: each request it relayed to the client that no answer reached yet is
   * answered to the upstream with an error, with the call's credential, so the upstream stops
   * waiting for it and does not take a client's answer that comes later (its relay id lives
   * `session.pendingInputMillis`) for a call that was cancelled or timed out
   * (docs/operations.md §10 "Relaying"). An answer delivered by another replica is not known
   * here: the upstream then gets this error after it and drops it as an id it has answered.
   */
  private endRelayed(
    upstream: UpstreamDefinition,
    relayed: readonly RelayedRequest[],
    context: MethodContext,
  ): void {
    for (const { key, session, id } of relayed) {
      if (!this.awaitingAnswers.delete(key)) continue;
      this.rememberEnded(key);
      void this.executor.respond(
        upstream,
        session,
        {
          jsonrpc: '2.0',
          id,
          error: {
            code: JsonRpcCode.InternalError,
            message:
              'The call that sent this request ended (cancelled, timed out or answered) before its client answered it',
          },
        },
        context.headers,
        context.caller,
      );
    }
  }

  /**
   * An upstream's notification about a request this call relayed to its client (MCP
   * 2025-11-25): `notifications/cancelled` of it (the upstream stopped waiting) reaches the
   * client under the id the client was given, and the request needs no answer any more;
   * `notifications/elicitation/complete` of a URL-mode elicitation it relayed reaches the client
   * as sent. true when it was one of those; any other message goes on to `relay`, which drops
   * a notification that is not the call's (a cancellation of anything else among them).
   */
  private relayFollowUp(
    message: JsonRpcMessage,
    origin: UpstreamMessageContext,
    relayed: readonly RelayedRequest[],
    context: MethodContext,
  ): boolean {
    if (message.id !== undefined) return false;
    const params = isRecord(message.params) ? message.params : undefined;
    if (params === undefined) return false;
    if (message.method === 'notifications/cancelled') {
      const request = relayed.find(
        (r) => r.session === origin.sessionId && r.id === params.requestId,
      );
      if (request === undefined) return false;
      if (this.awaitingAnswers.delete(request.key)) this.rememberEnded(request.key);
      const reason = typeof params.reason === 'string' ? params.reason.slice(0, 1024) : undefined;
      context.relay?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: request.relayId, ...(reason === undefined ? {} : { reason }) },
      });
      return true;
    }
    if (message.method === 'notifications/elicitation/complete') {
      const request = relayed.find(
        (r) =>
          r.elicitationId !== undefined &&
          r.session === origin.sessionId &&
          r.elicitationId === params.elicitationId,
      );
      if (request === undefined) return false;
      context.relay?.({
        jsonrpc: '2.0',
        method: 'notifications/elicitation/complete',
        params: { elicitationId: request.elicitationId },
      });
      return true;
    }
    return false;
  }

  private relay(
    upstream: UpstreamDefinition,
    message: JsonRpcMessage,
    origin: UpstreamMessageContext,
    context: MethodContext,
    onRequest: UpstreamRequestHook | undefined,
    logFloor: number,
    progressToken: unknown,
    full: boolean,
    refusals: { count: number },
  ): RelayedRequest | undefined {
    const isRequest = message.id !== undefined && typeof message.method === 'string';
    if (!isRequest) {
      if (relayable(message, progressToken, logFloor)) context.relay?.(message);
      return undefined;
    }
    // era bridging (docs/operations.md §11 "Multi round-trip and era bridging") takes the request
    // over: a 2026 client is asked by input_required
    if (onRequest?.(message, origin) === true) return undefined;
    const id = message.id as string | number;
    const capability = RELAYED_REQUESTS.get(message.method as string);
    // The upstream asks what this client declared it can do: the gateway declares a superset
    // on its shared session, so a request the caller did not declare is refused here.
    const undeclared =
      capability === undefined || context.clientCapabilities === undefined
        ? undefined
        : undeclaredBy(context.clientCapabilities, message);
    const declared = capability !== undefined && undeclared === undefined;
    // past MAX_TRACKED_REQUESTS on one call a request is refused, never relayed untracked: the
    // call's end answers every request it relayed (endRelayed)
    if (context.relay !== undefined && declared && context.relayRequests !== false && !full) {
      // bound to this caller and grant: only its own answer reaches the upstream
      const relayId = this.relayIds.seal(
        {
          upstream: upstream.id,
          ...(upstream.registration === undefined ? {} : { registration: upstream.registration }),
          session: origin.sessionId,
          id,
        },
        answerBinding(context.caller, context.access, context.sessionId),
      );
      context.relay({ ...message, id: relayId });
      const params = isRecord(message.params) ? message.params : undefined;
      const elicitationId =
        message.method === 'elicitation/create' && typeof params?.elicitationId === 'string'
          ? params.elicitationId
          : undefined;
      // the client's answer, should the upstream not take it, ends the call (deliverAnswer)
      return {
        key: awaitingKey(upstream, origin.sessionId, id),
        session: origin.sessionId,
        id,
        relayId,
        ...(elicitationId === undefined ? {} : { elicitationId }),
      };
    }
    // Too many asked on this call already, the client cannot be asked (no event stream), or the
    // method is not one a client serves.
    if (++refusals.count > MAX_REFUSED_REQUESTS) {
      context.signal?.abort('input-overflow');
      return undefined;
    }
    const tooMany = full && context.relay !== undefined && declared;
    void this.executor.respond(
      upstream,
      origin.sessionId,
      {
        jsonrpc: '2.0',
        id,
        error: {
          code: tooMany ? JsonRpcCode.InternalError : JsonRpcCode.MethodNotFound,
          message:
            capability === undefined
              ? 'Method not found'
              : tooMany
                ? `The call has ${MAX_TRACKED_REQUESTS} requests to its client already; no more are relayed`
                : context.relayRequests === false
                  ? 'The client speaks MCP 2026-07-28, whose answers cannot carry requests; it cannot be asked mid-call'
                  : context.relay === undefined
                    ? 'The client of this request takes no event stream; it cannot be asked'
                    : `The client did not declare the ${undeclared ?? capability} capability`,
        },
      },
      context.headers,
      context.caller,
    );
    return undefined;
  }
}

/** The cache hints a 2026 upstream put on a result: undefined when it put none. */
function readHintsOf(result: Record<string, unknown>): Record<string, unknown> | undefined {
  const { ttlMs, cacheScope } = result;
  return ttlMs === undefined && cacheScope === undefined ? undefined : { ttlMs, cacheScope };
}

/** A request of the upstream relayed to the client during a call, and its awaitingAnswers key. */
interface RelayedRequest {
  readonly key: string;
  readonly session: string | undefined;
  readonly id: string | number;
  /** The id the client was given for it (sealed). */
  readonly relayId: string;
  /** A URL-mode elicitation's `elicitationId` (2025-11-25), which its completion names. */
  readonly elicitationId?: string;
}

/** The Redis key of a relayed request taken once (answered or ended): a digest (the upstream's session id is a credential). */
function endedKey(key: string): string {
  return `relay-ended:${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * The key of a relayed request: a digest of its upstream, session and id, so what one replica
 * remembers of ended requests (settledRequests, ENDED_REMEMBERED of them) is bounded in bytes
 * too, whatever the length of the ids an upstream chooses.
 */
function awaitingKey(
  upstream: Pick<UpstreamDefinition, 'id' | 'registration'>,
  session: string | undefined,
  id: string | number,
): string {
  // the registration too: a server registered again under the id may reuse session and ids
  return createHash('sha256')
    .update(
      `${upstream.id}\u0000${upstream.registration ?? ''}\u0000${session ?? ''}\u0000${typeof id}:${id}`,
    )
    .digest('base64url');
}
