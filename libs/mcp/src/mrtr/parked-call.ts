import { randomBytes } from 'node:crypto';
import { addRequired, JsonRpcCode } from '@app/wire';
import { CallCancellation } from '@app/execution';
import type { JsonRpcMessage, UpstreamMessageContext } from '@app/upstream';
import type { AnsweringCredential } from './answering-credential';

/**
 * The most requests for the client's input one held call keeps (asked and refused-to-be-asked
 * together): an upstream that sends more is hostile or broken, and its call is ended at once
 * (docs/operations.md §11 "Multi round-trip"). Each one costs memory until the client answers,
 * and an answer to the upstream when the call is abandoned.
 */
export const MAX_PENDING_INPUTS = 32;

/** A request a 2025 upstream sent to the client during the call, not answered yet. */
export interface PendingUpstreamRequest {
  /** The upstream's own request id. */
  readonly id: string | number;
  /** The upstream session it arrived on. */
  readonly sessionId?: string;
  readonly method: string;
  readonly params: unknown;
}

/** Where a parked call stands when it is looked at. */
export type ParkedOutcome =
  | { readonly kind: 'settled'; readonly result?: object; readonly error?: unknown }
  /**
   * The upstream asked only what the client did not declare (its requests were refused):
   * the client is told which capabilities the call needs (2026: -32021, wire notes §4).
   */
  | { readonly kind: 'missing'; readonly requiredCapabilities: Record<string, unknown> }
  | {
      readonly kind: 'input';
      readonly inputRequests: Readonly<
        Record<string, { readonly method: string; readonly params: unknown }>
      >;
    };

/**
 * One 2025 upstream's `tools/call` held open for a 2026 client
 * (docs/operations.md §11 "Multi round-trip and era bridging"; wire notes §4 "2025 backend → 2026
 * client"): the upstream call runs on; each request it makes to the client waits here under an
 * input key until the client's retry brings the answer. `next()` tells what the client is to get
 * now: the settled call, or the open questions.
 */
export class ParkedCall {
  /** The key the call is held under (InputHandoff). */
  readonly key = randomBytes(12).toString('base64url');
  /** Serializes retries of this call: one round at a time. */
  queue: Promise<unknown> = Promise.resolve();
  /**
   * Where the progress and log messages the upstream sends go now: the stream of the request
   * whose round this is (the first request's, then each retry's on this replica); none
   * between rounds, or for a retry that reached this call from another replica.
   */
  relay?: (message: JsonRpcMessage) => void;
  /**
   * The credential of the retry whose answers are being given (a retry on this replica), which
   * the answers go to the upstream with (continuationContext); none for one from another replica.
   */
  answering?: AnsweringCredential;
  private readonly pending = new Map<string, PendingUpstreamRequest>();
  /** Requests for a capability the client did not declare, with what each needs. */
  private readonly undeclared: {
    readonly request: PendingUpstreamRequest;
    readonly capability: string;
    readonly required: Record<string, unknown>;
  }[] = [];
  private settled?: Extract<ParkedOutcome, { kind: 'settled' }>;
  private wake?: () => void;
  private asked = 0;
  private overflowed = false;

  /**
   * @param answer posts a JSON-RPC response to the upstream request (best effort)
   * @param cancellation aborts the upstream call (abandoned, or its client went away during a
   *   round): the one the call was forwarded with, when it parks after it started
   */
  constructor(
    private readonly answer: (request: PendingUpstreamRequest, response: JsonRpcMessage) => void,
    readonly cancellation: CallCancellation = new CallCancellation(),
  ) {}

  /** The upstream asked the client something: held until `respond` brings the answer. */
  add(message: JsonRpcMessage, origin: UpstreamMessageContext): void {
    if (this.overflows()) return;
    const method = message.method as string;
    const inputKey = `${method.split('/')[0] ?? 'input'}-${++this.asked}`;
    this.pending.set(inputKey, {
      id: message.id as string | number,
      sessionId: origin.sessionId,
      method,
      params: message.params ?? {},
    });
    this.wake?.();
  }

  /**
   * The upstream asked for a capability the client did not declare (`required`: what it needs,
   * as -32021 names it). Decided with the requests that arrive with it (`next`): when the
   * client can answer some of them, this one is refused and the others are asked (the upstream
   * may do without it); when it can answer none, the call needs what the client lacks.
   */
  addUndeclared(
    message: JsonRpcMessage,
    origin: UpstreamMessageContext,
    capability: string,
    required: Record<string, unknown>,
  ): void {
    if (this.overflows()) return;
    this.undeclared.push({
      request: {
        id: message.id as string | number,
        sessionId: origin.sessionId,
        method: message.method as string,
        params: message.params ?? {},
      },
      capability,
      required,
    });
    this.wake?.();
  }

  /** The upstream call ended (its result, or why not). */
  settle(outcome: { readonly result?: object; readonly error?: unknown }): void {
    this.settled = { kind: 'settled', ...outcome };
    this.wake?.();
  }

  /**
   * Answers every pending request the client's `inputResponses` has a key for (bare results,
   * wire notes §4); keys it does not hold are ignored, those it left out stay pending.
   */
  respond(inputResponses: unknown): void {
    if (typeof inputResponses !== 'object' || inputResponses === null) return;
    const responses = inputResponses as Record<string, unknown>;
    for (const [inputKey, request] of this.pending) {
      if (!Object.hasOwn(responses, inputKey)) continue;
      this.pending.delete(inputKey);
      this.answer(request, { jsonrpc: '2.0', id: request.id, result: responses[inputKey] });
    }
  }

  /** Refuses every pending request (the call is abandoned). */
  refuseAll(message: string): void {
    for (const [inputKey, request] of this.pending) {
      this.pending.delete(inputKey);
      this.answer(request, {
        jsonrpc: '2.0',
        id: request.id,
        error: { code: JsonRpcCode.InternalError, message },
      });
    }
  }

  /**
   * Waits until the call has settled or has an open question. Requests that arrive together
   * (in one turn of the event loop) are asked together.
   */
  async next(): Promise<ParkedOutcome> {
    for (;;) {
      if (this.settled !== undefined) return this.settled;
      if (this.pending.size > 0 || this.undeclared.length > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.settled !== undefined) return this.settled;
        const missing = this.pending.size === 0 ? this.missingCapabilities() : undefined;
        this.refuseUndeclared();
        if (missing !== undefined) return { kind: 'missing', requiredCapabilities: missing };
        // own properties whatever the keys (Object.fromEntries defines, never sets `__proto__`)
        const inputRequests: Record<string, { method: string; params: unknown }> =
          Object.fromEntries(
            [...this.pending].map(([inputKey, request]) => [
              inputKey,
              { method: request.method, params: request.params },
            ]),
          );
        return { kind: 'input', inputRequests };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /**
   * Whether one more request would pass MAX_PENDING_INPUTS: then the call is ended (its upstream
   * request aborted, its outcome the failure that says why) and this and later requests are
   * dropped unanswered, with the request they came on.
   */
  private overflows(): boolean {
    if (this.overflowed) return true;
    if (this.pending.size + this.undeclared.length < MAX_PENDING_INPUTS) return false;
    this.overflowed = true;
    this.cancellation.abort('input-overflow');
    return true;
  }

  private missingCapabilities(): Record<string, unknown> {
    const missing: Record<string, Record<string, unknown>> = {};
    for (const { required } of this.undeclared) addRequired(missing, required);
    return missing;
  }

  /** Answers the upstream's requests for undeclared capabilities: the client cannot be asked. */
  private refuseUndeclared(): void {
    for (const { request, capability } of this.undeclared.splice(0))
      this.answer(request, {
        jsonrpc: '2.0',
        id: request.id,
        error: {
          code: JsonRpcCode.MethodNotFound,
          message: `The client did not declare the ${capability} capability`,
        },
      });
  }
}
