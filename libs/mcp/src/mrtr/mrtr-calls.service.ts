import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  capabilityNeededBy,
  isModernVersion,
  JsonRpcCode,
  MCP_MAX_BODY_BYTES,
  undeclaredBy,
} from '@app/wire';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { CallCancellation } from '@app/execution';
import { inSpan, tracedHere } from '@app/observability';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { asksUrlElicitation } from '../errors/wire-errors';
import { type MethodContext, type MethodResult } from '../methods/method-handler';
import type { JsonRpcMessage, UpstreamEra } from '@app/upstream';
import {
  RELAYED_REQUESTS,
  resumingRequestRelay,
  UpstreamRouter,
  type UpstreamRequestHook,
} from '../relay/upstream-router';
import { InputHandoff } from './input-handoff';
import { LegacyInputBridge } from './legacy-input-bridge';
import { SpentStates } from './spent-states';
import { ParkedCall } from './parked-call';
import { bindingOf, plain, type UpstreamMrtrRequest } from './upstream-mrtr-request';
import { RequestStateEnvelope, type StateBinding } from './request-state-envelope';
import { sealedCallerKey } from '../sealing/sealed-caller';
import { callerKey } from '../session/caller-key';
import {
  answeringCredential,
  continuationContext,
  type AnsweringCredential,
} from './answering-credential';

/** The longest sealed requestState handed to a client: its retry leaves a quarter for the rest. */
const MAX_ENVELOPE_CHARS = Math.floor(MCP_MAX_BODY_BYTES * 0.75);

/** The most URLs one -32042 may ask a client to open (each an inputRequests entry). */
const MAX_URL_ELICITATIONS = 16;

/** Slack, in ms, over an upstream's callMillis for a retry that waits on another replica. */
const HANDOFF_SLACK_MILLIS = 5_000;

/** A round's outcome as it crosses replicas (JSON). */
type RoundOutcome =
  | { readonly kind: 'result'; readonly value: object }
  | {
      readonly kind: 'error';
      readonly code: number;
      readonly message: string;
      readonly data?: unknown;
      /** ForwardedError.upstreamEra: what the code means depends on it. */
      readonly upstreamEra?: UpstreamEra;
    };

/** Whose a parked call is: its caller (callerKey; none without `mcp.auth`) and upstream. */
interface ParkedBy {
  readonly owner?: string;
  readonly upstream: string;
}

/** A call parked on this replica. */
interface HeldCall extends ParkedBy {
  readonly call: ParkedCall;
  timer?: NodeJS.Timeout;
}

/** Adds `by` to the count of `key`, forgetting a count that reaches 0. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Multi round-trip `tools/call`, `prompts/get` and `resources/read` of upstream entries (the
 * methods that may answer input_required, wire notes §4), for both client eras
 * (docs/operations.md §11 "Multi round-trip and era bridging"):
 * - 2026 client, 2026 upstream: `input_required` passes unchanged but for `requestState`,
 *   wrapped in the gateway's envelope (RequestStateEnvelope) and unwrapped on the retry;
 * - 2026 client, 2025 upstream: the upstream's request to the client parks the call
 *   (ParkedCall, held by InputHandoff) and becomes `input_required`; the retry, on any
 *   replica, answers it and gets the call's result or the next question;
 * - 2025 client, 2026 upstream: `input_required` becomes requests on the client's SSE answer
 *   (LegacyInputBridge) and their answers the upstream retry, for up to 10 rounds;
 * - 2025 client, 2025 upstream: relayed as before (UpstreamRouter).
 */
@Injectable()
export class MrtrCalls implements OnApplicationShutdown {
  private readonly logger = new Logger('Mrtr');
  private readonly pendingMillis: number;
  private readonly parked = new Map<string, HeldCall>();
  /** Calls parked here per caller (callerKey; with `mcp.auth` on) and per upstream. */
  private readonly parkedBy = new Map<string, number>();
  private readonly parkedOn = new Map<string, number>();
  /**
   * Each parked call holds its upstream's answer stream, one of the upstream's connections
   * (`execution.maxConnectionsPerOrigin`), while it waits for the client: at most half of them
   * are held by parked calls, so calls that do not park always have the rest, and one caller
   * holds at most an eighth of that half (docs/operations.md §11 "Multi round-trip").
   */
  private readonly maxParkedPerUpstream: number;
  private readonly maxParkedPerCaller: number;

  constructor(
    private readonly envelope: RequestStateEnvelope,
    private readonly handoff: InputHandoff,
    private readonly bridge: LegacyInputBridge,
    private readonly router: UpstreamRouter,
    private readonly spent: SpentStates,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.pendingMillis = config.mcp.session.pendingInputMillis;
    this.maxParkedPerUpstream = Math.max(
      1,
      Math.floor(config.mcp.execution.maxConnectionsPerOrigin / 2),
    );
    this.maxParkedPerCaller = Math.max(1, Math.floor(this.maxParkedPerUpstream / 8));
  }

  onApplicationShutdown(): void {
    for (const key of [...this.parked.keys()]) this.abandon(key, 'The gateway is shutting down');
  }

  /** Runs the call for the client's era; results and errors as UpstreamRouter.forward. */
  call(call: UpstreamMrtrRequest, context: MethodContext): Promise<MethodResult> {
    if (!tracedHere()) return this.callUntraced(call, context);
    // one span per round of the multi round-trip exchange (docs/operations.md §3 "Traces")
    const modern = isModernVersion(context.protocolVersion);
    return inSpan(
      'mrtr round',
      {
        attributes: () => ({
          'mcp_gateway.mrtr.client_era': modern ? '2026-07-28' : '2025-11-25',
          'mcp_gateway.mrtr.retry': modern && call.params.requestState !== undefined,
        }),
      },
      () => this.callUntraced(call, context),
    );
  }

  private async callUntraced(
    call: UpstreamMrtrRequest,
    context: MethodContext,
  ): Promise<MethodResult> {
    if (!isModernVersion(context.protocolVersion)) return this.bridge.run(call, context);
    const binding = bindingOf(call, sealedCallerKey(context.caller));
    // not copied: nothing on the way to the upstream changes a request's params in place
    let params: Record<string, unknown> = call.params;
    if (params.requestState !== undefined) {
      const opened = this.envelope.open(params.requestState, binding);
      // one-time use (wire notes §4): a replayed envelope never reaches the upstream again
      if (
        opened.nonce !== undefined &&
        !(await this.spent.spend(opened.nonce, opened.expiresAt, callerKey(context.caller)))
      )
        throw new GatewayError(
          GatewayErrorCode.InvalidParams,
          'Invalid params: requestState was already used; a retry carries the requestState of the latest input_required',
        );
      const content = opened.content;
      if (content.kind === 'parked')
        return this.resume(call, content, params.inputResponses, opened.nonce, context);
      // the URL was to be opened first: the request goes again as it came (no retry fields)
      if (content.kind === 'reissue') {
        const { requestState: _s, inputResponses: _r, ...again } = params;
        params = again;
      } else params = { ...params, requestState: content.state };
    }
    return this.start(call, params, binding, context);
  }

  // ---- 2026 client --------------------------------------------------------------------------

  /**
   * A first round (or a 2026 upstream's retry), forwarded. Most calls never ask the client
   * anything: their outcome is the answer, and no ParkedCall is made. The first request the
   * upstream sends the client parks the call (ParkedCall, under the cancellation the call was
   * forwarded with), and the round goes on as a parked call's.
   */
  private async start(
    call: UpstreamMrtrRequest,
    params: Record<string, unknown>,
    binding: StateBinding,
    context: MethodContext,
  ): Promise<MethodResult> {
    const cancellation = new CallCancellation();
    // The client's cancellation counts while it waits for this round, not once it has its answer.
    context.signal?.onAbort((reason) => cancellation.abort(reason));
    const relay = context.relay;
    let parked: ParkedCall | undefined;
    let settled: { readonly result?: object; readonly error?: unknown } | undefined;
    let woken: (() => void) | undefined;
    const park = (): ParkedCall => {
      if (parked === undefined) {
        parked = new ParkedCall((request, response) => {
          // with the answering retry's credential, never an expired one: none left, the call ends
          const answering = continuationContext(context, parked?.answering);
          if (answering === undefined) return cancellation.abort('credential-expired');
          // an answer the upstream does not take: it waits for it in vain, so the call ends now
          void this.router
            .respond(call.upstream, request.sessionId, response, answering)
            .then((delivered) => {
              if (!delivered) cancellation.abort('answer-undelivered');
            });
        }, cancellation);
        parked.relay = relay;
        if (settled !== undefined) parked.settle(settled);
        woken?.();
      }
      return parked;
    };
    const declared = context.clientCapabilities;
    const hook: UpstreamRequestHook = (message, origin) => {
      const capability = RELAYED_REQUESTS.get(message.method as string);
      if (capability === undefined) return false;
      const undeclared = declared === undefined ? undefined : undeclaredBy(declared, message);
      if (undeclared !== undefined) {
        park().addUndeclared(
          message,
          origin,
          undeclared,
          capabilityNeededBy(message) ?? { [capability]: {} },
        );
        return true;
      }
      park().add(message, origin);
      return true;
    };
    const forwarded = this.router
      .forward(
        call.upstream,
        call.method,
        params,
        {
          ...context,
          signal: cancellation,
          // this request's stream until the call parks, then the stream of the request whose
          // round it is (ParkedCall.relay)
          relay: (m) => (parked === undefined ? relay : parked.relay)?.(m as JsonRpcMessage),
        },
        { requestHeaders: call.requestHeaders, onRequest: hook },
      )
      .then(
        (result) => {
          settled = { result };
          parked?.settle(settled);
        },
        (error: unknown) => {
          settled = { error };
          parked?.settle(settled);
        },
      );
    try {
      // the call's outcome, or the upstream's first request to the client, whichever comes first
      await new Promise<void>((resolve) => {
        woken = resolve;
        void forwarded.then(resolve);
      });
      if (parked === undefined && settled !== undefined) {
        if (settled.error === undefined) return this.relayedState(settled.result ?? {}, binding);
        const asked = this.urlElicitations(settled.error, binding, context);
        if (asked !== undefined) return asked;
        if (settled.error instanceof ForwardedError) throw settled.error;
        throw this.errorOf(this.transferable(settled.error));
      }
      const outcome = await this.round(park(), binding, {
        owner: callerKey(context.caller),
        upstream: call.upstream.id,
      });
      if (outcome.kind === 'result') return outcome.value;
      throw this.errorOf(outcome);
    } finally {
      context.signal?.onAbort(undefined);
      // this request has its answer: what the call sends later is not for its stream
      if (parked !== undefined && parked.relay === relay) parked.relay = undefined;
    }
  }

  /**
   * A 2025 upstream's -32042 (URL elicitation required; wire notes §4 "Era bridging"): a 2026
   * client, which has no such code, is asked to open each URL by input_required (URL-mode
   * `elicitation/create`, without the 2025-only `elicitationId`), and its retry sends the request
   * again; one that did not declare `elicitation.url` gets -32021 naming it. undefined for any
   * other error, a 2026 upstream's -32042 among them: 2026-07-28 defines no such code (wire
   * notes §5), so it is an undefined reserved code (-32603 naming it, modernForwardedError), not
   * a URL the client should open.
   */
  private urlElicitations(
    error: unknown,
    binding: StateBinding,
    context: MethodContext,
  ): MethodResult | undefined {
    if (!(error instanceof ForwardedError) || !asksUrlElicitation(error.rpcCode, error.upstreamEra))
      return undefined;
    const listed = isRecord(error.rpcData) ? error.rpcData.elicitations : undefined;
    const elicitations = Array.isArray(listed)
      ? listed.filter((e): e is Record<string, unknown> => isRecord(e) && typeof e.url === 'string')
      : [];
    if (elicitations.length === 0 || elicitations.length > MAX_URL_ELICITATIONS)
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `The upstream asked the client to open a URL first (-32042) without ${elicitations.length === 0 ? 'a URL' : `at most ${MAX_URL_ELICITATIONS} URLs`}`,
      );
    const inputRequests = Object.fromEntries(
      elicitations.map((e, i) => {
        const { elicitationId: _id, ...params } = e;
        return [
          `url-${i + 1}`,
          { method: 'elicitation/create', params: { ...params, mode: 'url' } },
        ];
      }),
    );
    const undeclared = Object.values(inputRequests)
      .map((r) =>
        context.clientCapabilities === undefined
          ? undefined
          : undeclaredBy(context.clientCapabilities, r),
      )
      .find((u) => u !== undefined);
    if (undeclared !== undefined)
      throw new ForwardedError(
        JsonRpcCode.MissingClientCapability,
        `Missing required client capability: ${undeclared}`,
        { requiredCapabilities: { elicitation: { url: {} } } },
      );
    return {
      resultType: 'input_required',
      inputRequests,
      requestState: this.envelope.wrap(binding, { kind: 'reissue' }),
    };
  }

  /**
   * The next outcome of a parked call; an open question parks it (held, abandonment timer), for
   * `who` when it is not held yet — or ends it, when `who` already holds as many parked calls as
   * it may (maxParkedPerCaller, maxParkedPerUpstream).
   */
  private async round(
    parked: ParkedCall,
    binding: StateBinding,
    who: ParkedBy,
  ): Promise<RoundOutcome> {
    const outcome = await parked.next();
    if (outcome.kind === 'missing') {
      // nothing the client can answer: the call cannot go on (400 -32021, wire notes §1.2, §4)
      this.release(parked.key);
      parked.cancellation.abort('cancelled');
      return {
        kind: 'error',
        code: JsonRpcCode.MissingClientCapability,
        message: `Missing required client capability: ${Object.keys(outcome.requiredCapabilities).join(', ')}`,
        data: { requiredCapabilities: outcome.requiredCapabilities },
      };
    }
    if (outcome.kind === 'settled') {
      this.release(parked.key);
      // an upstream's own input_required (a 2026 upstream): its requestState wrapped
      if (outcome.error === undefined)
        return { kind: 'result', value: this.relayedState(outcome.result ?? {}, binding) };
      return this.transferable(outcome.error);
    }
    const held = this.parked.get(parked.key);
    if (held === undefined) {
      const refusal = this.parkingRefusal(who);
      if (refusal !== undefined) {
        parked.refuseAll(refusal);
        parked.cancellation.abort('cancelled');
        return { kind: 'error', code: JsonRpcCode.InternalError, message: refusal };
      }
      this.parked.set(parked.key, { call: parked, ...who });
      count(this.parkedOn, who.upstream, 1);
      if (who.owner !== undefined) count(this.parkedBy, who.owner, 1);
      // replayable: a retry refused as spent never reaches the handoff, so only one whose
      // client was told to come again (its envelope given back) can get a kept outcome
      this.handoff.hold(parked.key, (input) => this.resumeHere(parked, binding, input), true);
    }
    this.arm(parked.key);
    return {
      kind: 'result',
      value: {
        resultType: 'input_required',
        inputRequests: outcome.inputRequests,
        requestState: this.envelope.wrap(
          binding,
          { kind: 'parked', owner: this.handoff.replicaId, key: parked.key },
          this.pendingMillis,
        ),
      },
    };
  }

  /**
   * A retry's answers for a call parked on this replica (run by InputHandoff). A retry that
   * arrived here brings its stream (`input.relay`, a function: it does not survive the JSON of
   * a resume from another replica), which gets the call's messages during its round.
   */
  private resumeHere(parked: ParkedCall, binding: StateBinding, input: unknown): Promise<unknown> {
    const next = parked.queue.then(async () => {
      const held = this.parked.get(parked.key);
      if (held === undefined) return { kind: 'gone' };
      if (held.timer !== undefined) clearTimeout(held.timer);
      const relay = isRecord(input) && typeof input.relay === 'function' ? input.relay : undefined;
      parked.relay = relay as ParkedCall['relay'];
      parked.answering =
        isRecord(input) && typeof input.answering === 'function'
          ? (input.answering as AnsweringCredential)
          : undefined;
      parked.respond(isRecord(input) ? input.inputResponses : undefined);
      const outcome = await this.round(parked, binding, held).finally(() => {
        if (parked.relay === relay) parked.relay = undefined;
      });
      // it may cross to another replica as JSON: a passed-on result as its value
      return outcome.kind === 'result' ? { kind: 'result', value: plain(outcome.value) } : outcome;
    });
    parked.queue = next.catch(() => undefined);
    return next;
  }

  /** A retry carrying a parked call's envelope: resumed where the call is held. */
  private async resume(
    call: UpstreamMrtrRequest,
    content: { readonly owner: string; readonly key: string },
    inputResponses: unknown,
    nonce: string | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    const relay =
      context.relay === undefined ? undefined : resumingRequestRelay(context.relay, call.params);
    const handed = await this.handoff.resume(
      content.owner,
      content.key,
      // the credential as a function: on this replica only, never through Redis
      { inputResponses, relay, answering: answeringCredential(context) },
      call.upstream.callMillis + this.pendingMillis + HANDOFF_SLACK_MILLIS,
    );
    if (handed.kind === 'unreachable') {
      // the call may still be held: the retry was never used, and may come again
      if (nonce !== undefined) await this.spent.refund(nonce, callerKey(context.caller));
      throw new GatewayError(
        GatewayErrorCode.Internal,
        'The replica holding this call cannot be reached now (the shared store, Redis, does not answer); retry with the same requestState shortly',
      );
    }
    if (handed.kind === 'lost')
      // the envelope stays spent: its input was taken, and the call is gone with its replica
      throw new GatewayError(
        GatewayErrorCode.Internal,
        "The replica holding this call stopped after it took this retry's input, before it answered: the call's outcome is unknown (the upstream may have acted on the input). Check before calling again",
      );
    const outcome =
      handed.kind === 'ok' ? (handed.value as RoundOutcome | { kind: 'gone' }) : handed;
    if (outcome.kind === 'gone')
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        this.handoff.shared
          ? 'Invalid params: requestState refers to a call that is no longer pending (finished or expired)'
          : 'Invalid params: requestState refers to a call that is no longer pending here (finished, expired, or held by another replica: without Redis a retry must reach the replica that answered input_required)',
      );
    if (outcome.kind === 'result') return outcome.value;
    throw this.errorOf(outcome);
  }

  /** A 2026 upstream's input_required: its requestState wrapped in the gateway's envelope. */
  private relayedState(result: object, binding: StateBinding): object {
    const value = plain(result);
    if (value.resultType !== 'input_required' || typeof value.requestState !== 'string')
      return result;
    const requestState = this.envelope.wrap(binding, {
      kind: 'relayed',
      state: value.requestState,
    });
    // The client sends it back in a request body, which the gateway takes up to
    // MCP_MAX_BODY_BYTES: a state it could not take back is refused now, saying why, instead of
    // handed out for a retry that would be 413 (the arguments and answers need room beside it)
    if (requestState.length > MAX_ENVELOPE_CHARS)
      throw new ForwardedError(
        JsonRpcCode.InternalError,
        `The upstream's requestState is too large to hand to the client (${value.requestState.length} characters, ${requestState.length} sealed): its retry could not fit the gateway's ${MCP_MAX_BODY_BYTES}-byte request limit`,
      );
    return { ...value, requestState };
  }

  private arm(key: string): void {
    const held = this.parked.get(key);
    if (held === undefined) return;
    if (held.timer !== undefined) clearTimeout(held.timer);
    held.timer = setTimeout(
      () => this.abandon(key, 'The client did not come back with the input in time'),
      this.pendingMillis,
    );
    held.timer.unref();
  }

  /** Ends a parked call nobody came back for: its requests refused, the upstream call aborted. */
  private abandon(key: string, reason: string): void {
    const held = this.parked.get(key);
    if (held === undefined) return;
    this.logger.debug(`Abandoning a parked upstream call: ${reason}`);
    this.release(key);
    held.call.refuseAll(reason);
    held.call.cancellation.abort('cancelled');
  }

  /** Why `who` may not park one more call; undefined when it may. */
  private parkingRefusal(who: ParkedBy): string | undefined {
    if ((this.parkedOn.get(who.upstream) ?? 0) >= this.maxParkedPerUpstream)
      return `Upstream ${who.upstream} has ${this.maxParkedPerUpstream} calls waiting for their clients' input already (half its connections, execution.maxConnectionsPerOrigin); this call was ended. Retry it later.`;
    if (who.owner !== undefined && (this.parkedBy.get(who.owner) ?? 0) >= this.maxParkedPerCaller)
      return `This caller has ${this.maxParkedPerCaller} calls waiting for its input already; this call was ended. Answer or cancel those first.`;
    return undefined;
  }

  private release(key: string): void {
    const held = this.parked.get(key);
    if (held?.timer !== undefined) clearTimeout(held.timer);
    if (held !== undefined) {
      count(this.parkedOn, held.upstream, -1);
      if (held.owner !== undefined) count(this.parkedBy, held.owner, -1);
    }
    this.parked.delete(key);
    this.handoff.release(key);
  }

  private transferable(error: unknown): Extract<RoundOutcome, { kind: 'error' }> {
    if (error instanceof ForwardedError)
      return {
        kind: 'error',
        code: error.rpcCode,
        message: error.message,
        data: error.rpcData,
        ...(error.upstreamEra === undefined ? {} : { upstreamEra: error.upstreamEra }),
      };
    if (error instanceof GatewayError && error.code === GatewayErrorCode.InvalidParams)
      return { kind: 'error', code: JsonRpcCode.InvalidParams, message: error.message };
    this.logger.warn(
      `A parked upstream call failed unexpectedly (${error instanceof Error ? error.name : typeof error})`,
    );
    return { kind: 'error', code: JsonRpcCode.InternalError, message: 'Internal error' };
  }

  private errorOf(outcome: Extract<RoundOutcome, { kind: 'error' }>): GatewayError {
    return new ForwardedError(outcome.code, outcome.message, outcome.data, outcome.upstreamEra);
  }
}
