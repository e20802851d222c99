import { Inject, Injectable, Optional } from '@nestjs/common';
import type { UpstreamDefinition } from '@app/config';
import {
  callerExpired,
  callerName,
  SourceCredentialError,
  type CallerIdentity,
} from '@app/identity';
import { GatewayMetrics } from '@app/observability';
import {
  UpstreamConnections,
  UpstreamFailure,
  upstreamRequestHeaders,
  type JsonRpcMessage,
  type UpstreamEra,
  type UpstreamMessageContext,
  type UpstreamSignal,
} from '@app/upstream';
import { AnswerBudget, type BudgetClaim } from './answer-budget';
import { CallerShares, NO_SHARE, poolOf } from './caller-shares';
import type { CallCancellation } from './call-cancellation';
import { CallerRequestHeaders } from './caller-request-headers';
import type { IncomingHeaders } from './call-tool-result';

/** What a request routed to an upstream gives back: its result, its JSON-RPC error, or why neither. */
export type UpstreamOutcome =
  | {
      readonly kind: 'result';
      readonly result: Record<string, unknown>;
      /** `result` as the upstream wrote it, when known (UpstreamAnswer.resultText). */
      readonly resultText?: string;
      /** The revision of the upstream that answered (UpstreamAnswer). */
      readonly era?: UpstreamEra;
    }
  | {
      readonly kind: 'error';
      readonly code: number;
      readonly message: string;
      readonly data?: unknown;
      /** The revision of the upstream that answered (UpstreamAnswer). */
      readonly era?: UpstreamEra;
    }
  | {
      readonly kind: 'failed';
      /** Safe for clients: names the upstream by id, never its address. */
      readonly message: string;
      /**
       * `credential`: no token for the upstream, its token exchange failed
       * (docs/operations.md §14 "Credentials towards sources").
       */
      readonly failureKind: UpstreamFailure['kind'] | 'unexpected' | 'credential';
      /**
       * The request may have reached the upstream and run (UpstreamFailure.mayHaveRun; a
       * failure the gateway cannot place, `unexpected`, too); false when nothing was sent.
       */
      readonly mayHaveRun: boolean;
    };

/** The caller's side of a routed request. */
export interface UpstreamCallContext {
  /** The agent's HTTP request headers, lower-cased (forwardHeaders and Authorization are read). */
  readonly headers: IncomingHeaders;
  /**
   * Aborted when nobody waits any more: the upstream request is aborted too
   * (docs/operations.md §10 "Relaying").
   */
  readonly signal?: CallCancellation;
  /**
   * The agent's declared client capabilities, when known: a 2026 upstream gets them in the
   * request's `_meta` envelope (wire notes G-23), so it asks only for what the agent can give.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /**
   * Request-metadata headers the request needs beside the caller's forwarded ones, already
   * encoded: `Mcp-Param-*` for a tool's `x-mcp-header` arguments (wire notes §1.2).
   */
  readonly requestHeaders?: Readonly<Record<string, string>>;
  /** Notifications and server->client requests the upstream sends while the request runs. */
  readonly onMessage?: (message: JsonRpcMessage, context: UpstreamMessageContext) => void;
  /**
   * The authenticated caller (docs/operations.md §13): its token is exchanged for one issued for an
   * upstream whose authorization mode is tokenExchange
   * (docs/operations.md §14 "Credentials towards sources").
   */
  readonly caller?: CallerIdentity;
  /**
   * The era the agent speaks: a 2025 agent's request to a dual-era upstream goes on a 2025
   * session (UpstreamConnections.forClientEra). Undefined: the upstream's own era.
   */
  readonly clientEra?: '2025' | '2026';
  /**
   * When the call this request is a round of must end (`performance.now()` time), if before
   * its own `callMillis` is out: a bridged call's rounds share one deadline.
   */
  readonly deadlineAt?: number;
}

/**
 * The caller's CallCancellation as the upstream client's signal, without an AbortController:
 * the client adds and removes its `abort` listeners around each exchange, and an EventTarget
 * per call is the cost the bundle path already shed (CallCancellation). It exposes no
 * reason, so a 2025 upstream is told "cancelled by the gateway", as before.
 */
class CancellationSignal implements UpstreamSignal {
  private listeners: (() => void)[] = [];

  constructor(private readonly cancellation: CallCancellation) {
    cancellation.onAbort(() => this.fire());
  }

  get aborted(): boolean {
    return this.cancellation.aborted;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
  }

  private fire(): void {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // one listener's failure must not keep the others from running
      }
    }
  }
}

function cancelledMessage(reason: string | undefined, upstream: UpstreamDefinition): string {
  if (reason === 'shutdown')
    return `The gateway is shutting down; the request to upstream ${upstream.id} was cut. Retry it.`;
  if (reason === 'answer-undelivered')
    return (
      `Upstream ${upstream.id} did not take the client's answer to its request (its session ` +
      'may have ended), so the request could not go on; it was ended. Retry it.'
    );
  if (reason === 'credential-expired')
    return (
      `The caller's token expired while the request to upstream ${upstream.id} waited for the ` +
      "client's input; the gateway sends no expired credential upstream. Call again with a fresh token"
    );
  if (reason === 'session-ended')
    return `The client ended its session; the request to upstream ${upstream.id} was cancelled`;
  if (reason === 'session-expired')
    return (
      `The client's session expired (mcp.session.ttlSeconds) while the request to upstream ` +
      `${upstream.id} waited for its answer, which can no longer come; it was cancelled. ` +
      'Initialize a new session and call again'
    );
  if (reason === 'input-overflow')
    return (
      `Upstream ${upstream.id} sent more requests for the client's input than one call may ` +
      'hold; the request was ended'
    );
  return `The request to upstream ${upstream.id} was cancelled`;
}

/**
 * Runs requests on upstream MCP servers for the agent (docs/operations.md §10 "Routing"):
 * tools/call, prompts/get, resources/read, completion/complete and the forwarded methods, each
 * bounded by the upstream's `callMillis` and cancelled with the caller. Results and JSON-RPC errors
 * come back unchanged; a failure is described by upstream id, never by address.
 */

/**
 * Why a caller's request was not sent (CallerShares): for its whole deadline the caller had its
 * share of the upstream's requests running. Names the upstream by id only.
 */
function callerShareWait(upstreamId: string, share: number, waitedMillis: number): string {
  return `Upstream ${upstreamId}: not sent: for ${Math.round(waitedMillis)} ms this caller had ${share} other requests to it running, its share of its connections (execution.maxConcurrentCallsPerCaller)`;
}

@Injectable()
export class UpstreamExecutor {
  constructor(
    private readonly connections: UpstreamConnections,
    private readonly callerHeaders: CallerRequestHeaders,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    /** The answer bytes held at once, shared with Tool Service calls (operations §1). */
    @Optional() @Inject(AnswerBudget) private readonly budget: AnswerBudget | null = null,
    /** Each caller's requests running per origin's pool (operations §1), shared with its listens. */
    @Optional() @Inject(CallerShares) private readonly shares: CallerShares | null = null,
  ) {}

  /**
   * Sends one request to the upstream and waits for its answer.
   * @param method the MCP method, e.g. tools/call
   * @param params the params to send, names and URIs already the upstream's own
   */
  async forward(
    upstream: UpstreamDefinition,
    method: string,
    params: Record<string, unknown> | undefined,
    context: UpstreamCallContext,
  ): Promise<UpstreamOutcome> {
    const started = performance.now();
    const { signal } = context;
    const { budget } = this;
    const claim: BudgetClaim = { bytes: 0, caller: callerName(context.caller) };
    let outcome: UpstreamOutcome;
    // one deadline for the whole request, the connection it waits for included
    const end = Math.min(started + upstream.callMillis, context.deadlineAt ?? Infinity);
    const left = (): number => Math.max(1, Math.round(end - performance.now()));
    const cancellation = signal === undefined ? undefined : new CancellationSignal(signal);
    // one caller's requests hold at most its share of the upstream's connections: past it this
    // one waits for one of the caller's own to end, within its deadline
    const taken =
      this.shares === null || context.caller === undefined
        ? NO_SHARE
        : this.shares.acquire(
            poolOf('upstream', upstream.url),
            context.caller,
            left(),
            cancellation,
          );
    const waited = taken instanceof Promise;
    const share = waited ? await taken : taken;
    if (share === undefined) {
      const outcome: UpstreamOutcome = {
        kind: 'failed',
        failureKind: signal?.aborted === true ? 'cancelled' : 'timeout',
        // it waited for one of the caller's own connections: nothing was sent
        mayHaveRun: false,
        message:
          signal?.aborted === true
            ? cancelledMessage(signal.reason, upstream)
            : callerShareWait(upstream.id, this.shares?.perCaller ?? 0, end - started),
      };
      this.metrics?.upstreamCall(upstream.id, method, outcome.failureKind, 0);
      return outcome;
    }
    try {
      const chosen = this.connections.forClientEra(
        upstream,
        context.clientEra,
        context.deadlineAt === undefined && !waited ? upstream.callMillis : left(),
        cancellation,
      );
      const connection = chosen instanceof Promise ? await chosen : chosen;
      const headers =
        upstream.authorization.mode === 'tokenExchange'
          ? await this.callerHeaders.for(upstream, context.headers, context.caller)
          : upstreamRequestHeaders(upstream, context.headers);
      const answer = await connection.request(method, params, {
        deadlineMillis:
          chosen instanceof Promise || context.deadlineAt !== undefined || waited
            ? left()
            : upstream.callMillis,
        signal: cancellation,
        headers:
          context.requestHeaders === undefined
            ? headers
            : { ...headers, ...context.requestHeaders },
        onMessage: context.onMessage,
        clientCapabilities: context.clientCapabilities,
        ...(context.caller?.expiresAt === undefined
          ? {}
          : { credentialExpiresAtMs: context.caller.expiresAt * 1000 }),
        takeBytes: budget === null ? undefined : (bytes) => budget.take(claim, bytes),
      });
      outcome = answer;
    } catch (err) {
      outcome =
        err instanceof SourceCredentialError
          ? {
              kind: 'failed',
              failureKind: err.addressRefused ? 'address-refused' : 'credential',
              mayHaveRun: false,
              message: `Upstream ${upstream.id}: the gateway could not obtain a credential for it (${err.message})`,
            }
          : err instanceof UpstreamFailure
            ? {
                kind: 'failed',
                failureKind: err.kind,
                mayHaveRun: err.mayHaveRun,
                message:
                  err.kind === 'cancelled'
                    ? cancelledMessage(signal?.reason, upstream)
                    : `Upstream ${upstream.id}: ${err.message}`,
              }
            : {
                kind: 'failed',
                failureKind: 'unexpected',
                mayHaveRun: true,
                message: `Upstream ${upstream.id}: the request failed unexpectedly`,
              };
    } finally {
      share();
      signal?.onAbort(undefined);
      budget?.release(claim);
    }
    this.metrics?.upstreamCall(
      upstream.id,
      method,
      outcome.kind === 'failed'
        ? outcome.failureKind
        : outcome.kind === 'error'
          ? 'error'
          : outcome.result.isError === true
            ? 'tool_error'
            : 'success',
      (performance.now() - started) / 1000,
    );
    return outcome;
  }

  /**
   * Posts the agent's answer to a server->client request back to the upstream that asked
   * (2025 session `sessionId`), bounded by its connectMillis. false when it could not be
   * delivered (the upstream request then times out on the upstream's side).
   */
  async respond(
    upstream: UpstreamDefinition,
    sessionId: string | undefined,
    response: JsonRpcMessage,
    headers: IncomingHeaders,
    caller?: CallerIdentity,
  ): Promise<boolean> {
    // a caller's credential that has expired is never sent: the answer (the gateway's own
    // error answer at a call's end, a refusal) goes without it (docs/security.md "Answers to
    // relayed requests")
    const expired = callerExpired(caller);
    try {
      await this.connections.forAnswer(upstream).respond(response, sessionId, {
        deadlineMillis: Math.max(upstream.connectMillis, 5_000),
        headers: expired ? undefined : await this.callerHeaders.for(upstream, headers, caller),
      });
      return true;
    } catch {
      return false;
    }
  }
}
