import { randomBytes, randomUUID } from 'node:crypto';
import { declaresExtension, Extension, JsonRpcCode, undeclaredBy } from '@app/wire';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics } from '@app/observability';
import type { JsonRpcMessage } from '@app/upstream';
import { ForwardedError } from '../errors/gateway-error';
import { asksMissingCapability } from '../errors/wire-errors';
import type { MethodContext, MethodResult } from '../methods/method-handler';
import { RELAYED_REQUESTS, UpstreamRouter } from '../relay/upstream-router';
import { increasingProgress } from '../relay/increasing-progress';
import {
  answerBinding,
  bindingFields,
  boundTo,
  type AnswerDelivery,
} from '../relay/answer-binding';
import { InputHandoff } from './input-handoff';
import { MAX_PENDING_INPUTS } from './parked-call';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { plain, type UpstreamMrtrRequest } from './upstream-mrtr-request';
import {
  answeringCredential,
  continuationContext,
  CREDENTIAL_EXPIRED_TEXT,
  type AnsweringCredential,
} from './answering-credential';

/** A 2026 `inputRequests` entry (wire notes §4): `{method, params}`, no id, no envelope. */
export interface InputRequest {
  readonly method: string;
  readonly params: unknown;
}

/** The client's answers keyed as the upstream keyed its questions, or why there are none. */
export type BridgedAnswers =
  | {
      readonly kind: 'answers';
      readonly inputResponses: Record<string, unknown>;
      /** The credential of the last answer that reached this replica (none: from another one). */
      readonly answering?: AnsweringCredential;
    }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * How long a 2025 client's answer to a bridged request waits for the replica holding its call, ms:
 * past InputHandoff's grace for a publish Redis did not take (8 s), so that one is told apart.
 */
const ANSWER_WAIT_MILLIS = 10_000;
/** How many input_required rounds a 2025 client's call may go through (the v2 client's own bound). */
const MAX_BRIDGED_ROUNDS = 10;

/** What a client's answer to one bridged request carries to the waiting call. */
interface BridgedAnswer {
  readonly i: string;
  readonly result?: unknown;
  readonly error?: { readonly message?: unknown };
  /** The answering request's credential: a function, so it never crosses to another replica. */
  readonly answering?: AnsweringCredential;
}

/**
 * An input request's params as a 2025 client is sent them: a URL-mode `elicitation/create`
 * carries an `elicitationId` in 2025-11-25 (required there; 2026-07-28 removed it, wire notes
 * G-18), so one is made for it when the upstream gave none.
 */
function legacyParams(method: unknown, entry: unknown): unknown {
  const params = isRecord(entry) ? (entry.params ?? {}) : {};
  if (
    method !== 'elicitation/create' ||
    !isRecord(params) ||
    params.mode !== 'url' ||
    typeof params.elicitationId === 'string'
  )
    return params;
  return { ...params, elicitationId: randomUUID() };
}

function withoutRetryFields(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { inputResponses: _r, requestState: _s, ...rest } = params;
  return rest;
}

/**
 * What a 2025 client gets when the upstream's questions cannot be put to it or answered: a
 * tool call an isError result (as the v2 SDK's own legacy serving answers), a `prompts/get`
 * or `resources/read`, whose results have no error form, a -32603 error with the reason.
 */
function refusal(request: UpstreamMrtrRequest, text: string): object {
  if (request.method === 'tools/call') return { content: [{ type: 'text', text }], isError: true };
  throw new ForwardedError(JsonRpcCode.InternalError, text);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * 2025 client → 2026 upstream (docs/operations.md §11 "Multi round-trip and era bridging"; wire
 * notes §4 "2026 backend → 2025 client"): the upstream's `inputRequests` become real requests
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the client's SSE call stream,
 * under sealed ids (MrtrSeal `bridge-id`: owner replica, wait key, input key, bound to the caller
 * and its grant, expiring after `pendingInputMillis`;
 * docs/security.md "Answers to relayed requests"). The client's answers, POSTed to any replica,
 * come back through InputHandoff to the replica that waits, keyed as the upstream keyed its
 * questions, for the retry upstream.
 */
@Injectable()
export class LegacyInputBridge {
  private readonly pendingMillis: number;

  constructor(
    private readonly seal: MrtrSeal,
    private readonly handoff: InputHandoff,
    private readonly router: UpstreamRouter,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.pendingMillis = config.mcp.session.pendingInputMillis;
  }

  /**
   * Puts the upstream's questions to the client and waits for every answer (at most
   * `pendingInputMillis`); `what` names the asking entry in refusals ("tool", "prompt", …).
   * Refused, with the reason, when the client cannot be asked (no SSE answer, an undeclared
   * capability, a method a client does not serve), answers with a JSON-RPC error, does not
   * answer in time, or cancels the call.
   */
  async ask(
    inputRequests: Readonly<Record<string, unknown>>,
    context: MethodContext,
    what = 'tool',
    waitMillis = this.pendingMillis,
  ): Promise<BridgedAnswers> {
    const entries = Object.entries(inputRequests);
    // as many as a held call keeps (parked-call.ts): each one waits on the client, and on memory
    if (entries.length > MAX_PENDING_INPUTS)
      return refused(
        `The ${what} asked the client for ${entries.length} inputs at once, more than one call may hold (${MAX_PENDING_INPUTS})`,
      );
    const requests: [string, InputRequest][] = [];
    for (const [inputKey, entry] of entries) {
      const method = isRecord(entry) && typeof entry.method === 'string' ? entry.method : '';
      const capability = RELAYED_REQUESTS.get(method);
      if (capability === undefined)
        return refused(
          `The ${what} asked the client for an input it cannot give (${method.slice(0, 64) || 'no method'})`,
        );
      if (context.relay === undefined)
        return refused(
          `The ${what} needs input from the client (${method}), but this request takes no event stream; call it with Accept: text/event-stream`,
        );
      const undeclared =
        context.clientCapabilities === undefined
          ? undefined
          : undeclaredBy(context.clientCapabilities, entry);
      if (undeclared !== undefined)
        return refused(
          `The ${what} needs input from the client (${method}), but the client did not declare the ${undeclared} capability`,
        );
      requests.push([inputKey, { method, params: legacyParams(method, entry) }]);
    }
    if (requests.length === 0) return { kind: 'answers', inputResponses: {} };

    const waitKey = randomBytes(12).toString('base64url');
    // a Map: the input keys are the upstream's (`__proto__` is one like any other)
    const inputResponses = new Map<string, unknown>();
    let answering: AnsweringCredential | undefined;
    let finish: (outcome: BridgedAnswers) => void = () => undefined;
    const done = new Promise<BridgedAnswers>((resolve) => (finish = resolve));
    // the 2025 session's expiry bounds the wait too: past it the client's answer is 404 like
    // any POST of the session (docs/operations.md §9 "Ending a session")
    const sessionLeft =
      context.sessionExpiresAtMs === undefined
        ? Number.POSITIVE_INFINITY
        : context.sessionExpiresAtMs - Date.now();
    const wait = Math.min(waitMillis, this.pendingMillis, sessionLeft);
    const timer = setTimeout(
      () => {
        if (wait === sessionLeft) this.metrics?.sessionCallsEnded('expired');
        finish(
          refused(
            wait === sessionLeft
              ? `The client's session expired (mcp.session.ttlSeconds) before it answered; initialize a new session and call again`
              : wait < this.pendingMillis
                ? `The client did not answer within the ${what}'s call deadline (callMillis)`
                : `The client did not answer within ${this.pendingMillis} ms`,
          ),
        );
      },
      Math.max(1, wait),
    );
    timer.unref();
    context.signal?.onAbort(() => finish(refused('The call was cancelled')));
    this.handoff.hold(waitKey, (input) => {
      const answer = input as BridgedAnswer;
      const request = requests.find(([k]) => k === answer.i);
      if (request === undefined || inputResponses.has(answer.i)) return Promise.resolve(false);
      if (answer.error !== undefined) {
        const message = typeof answer.error.message === 'string' ? answer.error.message : '';
        finish(
          refused(`The client could not answer ${request[1].method}: ${message.slice(0, 200)}`),
        );
      } else {
        inputResponses.set(answer.i, answer.result ?? {});
        answering = typeof answer.answering === 'function' ? answer.answering : undefined;
        if (inputResponses.size === requests.length)
          finish({
            kind: 'answers',
            inputResponses: Object.fromEntries(inputResponses),
            ...(answering === undefined ? {} : { answering }),
          });
      }
      return Promise.resolve(true);
    });
    const exp = Date.now() + this.pendingMillis;
    const binding = answerBinding(context.caller, context.access, context.sessionId);
    for (const [inputKey, request] of requests) {
      const id = this.seal.seal('bridge-id', {
        exp,
        o: this.handoff.replicaId,
        k: waitKey,
        i: inputKey,
        ...bindingFields(binding),
      } as { exp: number });
      context.relay?.({ jsonrpc: '2.0', id, method: request.method, params: request.params });
    }
    try {
      return await done;
    } finally {
      clearTimeout(timer);
      context.signal?.onAbort(undefined);
      this.handoff.release(waitKey);
    }
  }

  /**
   * A 2025 client's answer (a JSON-RPC response) to a bridged request: delivered to the call
   * that waits for it, on whichever replica, when `context`'s caller and grant are the ones the
   * id was issued to. `not-ours` when the id is not of the bridge form; `foreign` when it is but
   * does not open (forged, another gateway identity's); `other-caller` or `expired` when it is
   * one of this gateway's but may not be taken.
   */
  async deliverAnswer(message: JsonRpcMessage, context: MethodContext): Promise<AnswerDelivery> {
    const content = this.seal.inspect('bridge-id', message.id);
    if (content === undefined) return 'not-ours';
    if (content.kind !== 'open') return content.kind;
    const origin = content.payload;
    if (typeof origin.o !== 'string' || typeof origin.k !== 'string') return 'foreign';
    const bound = boundTo(origin, answerBinding(context.caller, context.access, context.sessionId));
    if (bound !== 'bound') return bound;
    const answer: BridgedAnswer = {
      i: String(origin.i),
      ...('error' in message
        ? { error: isRecord(message.error) ? message.error : {} }
        : { result: message.result }),
      answering: answeringCredential(context),
    };
    // waited on longer than a failed publish's grace, so that Redis not answering reads as
    // `unreachable` (the client sends it again) and not as a call that is gone
    const outcome = await this.handoff.resume(origin.o, origin.k, answer, ANSWER_WAIT_MILLIS);
    if (outcome.kind === 'unreachable') return 'unreachable';
    // lost: the holder took it and stopped, and the call with it (its client's stream was there)
    if (outcome.kind !== 'ok' || outcome.value !== true) return 'not-waited';
    return 'delivered';
  }

  /**
   * A 2025 client's `tools/call`, `prompts/get` or `resources/read` of an upstream's entry: a
   * 2026 upstream's input_required rounds are answered by the client (`ask`) and retried
   * upstream, up to 10 rounds; the client gets one ordinary result (wire notes G-7), or
   * `refusal` when it cannot answer.
   */
  async run(call: UpstreamMrtrRequest, context: MethodContext): Promise<MethodResult> {
    const base = withoutRetryFields(call.params);
    let params = base;
    // the upstream's callMillis bounds the whole call, every round and every wait on the client
    // (docs/operations.md §11 "Multi round-trip and era bridging"), as it bounds a parked 2025 upstream's one request
    const deadlineAt = performance.now() + call.upstream.callMillis;
    const late = (): object =>
      refusal(
        call,
        `The ${noun(call)} did not finish within its upstream's callMillis (${call.upstream.callMillis} ms) over its input rounds`,
      );
    // every round is a new upstream request under the client's one progress token, each
    // counting from its start again: the client sees the progress only while it increases
    let forwarded =
      context.relay === undefined
        ? context
        : { ...context, relay: increasingProgress(context.relay) };
    for (let round = 1; ; round++) {
      let result: object;
      try {
        result = await this.router.forward(call.upstream, call.method, params, forwarded, {
          requestHeaders: call.requestHeaders,
          deadlineAt,
        });
      } catch (err) {
        // -32021 is a 2026 code: a 2025 client learns in words which capability it lacks; a
        // 2025 upstream's -32021 is its own code (wire notes §5), passed on as sent
        if (err instanceof ForwardedError && asksMissingCapability(err.rpcCode, err.upstreamEra)) {
          const required = isRecord(err.rpcData) ? err.rpcData.requiredCapabilities : undefined;
          // a tool that runs only as a task: no 2025 client can (docs/operations.md §10 "Tasks")
          if (declaresExtension(required, Extension.tasks))
            return refusal(
              call,
              `The ${noun(call)} runs only as a task (the ${Extension.tasks} extension), which only protocol revision 2026-07-28 clients that declare it can use; a 2025-11-25 client cannot call it`,
            );
          return refusal(
            call,
            `The ${noun(call)} needs input from the client, but the client did not declare the capability for it (${JSON.stringify(required ?? {}).slice(0, 200)})`,
          );
        }
        throw err;
      }
      const value = plain(result);
      // wire notes G-7: never an input_required to a 2025 client
      if (value.resultType !== 'input_required') return result;
      if (round > MAX_BRIDGED_ROUNDS)
        return refusal(
          call,
          `The ${noun(call)} kept asking for input (more than ${MAX_BRIDGED_ROUNDS} rounds); giving up`,
        );
      const remaining = deadlineAt - performance.now();
      if (remaining <= 0) return late();
      const asked = isRecord(value.inputRequests) ? value.inputRequests : {};
      const answers = await this.ask(asked, context, noun(call), remaining);
      if (answers.kind === 'refused') return refusal(call, answers.message);
      if (performance.now() >= deadlineAt) return late();
      // the retry goes with the answering request's credential, never an expired one
      // (docs/security.md "Answers to relayed requests")
      const next = continuationContext(forwarded, answers.answering);
      if (next === undefined) return refusal(call, CREDENTIAL_EXPIRED_TEXT);
      forwarded = next;
      params = {
        ...base,
        ...(Object.keys(answers.inputResponses).length > 0
          ? { inputResponses: answers.inputResponses }
          : {}),
        ...(typeof value.requestState === 'string' ? { requestState: value.requestState } : {}),
      };
    }
  }
}

function noun(request: UpstreamMrtrRequest): string {
  return request.method === 'tools/call'
    ? 'tool'
    : request.method === 'prompts/get'
      ? 'prompt'
      : 'resource';
}

function refused(message: string): BridgedAnswers {
  return { kind: 'refused', message };
}
