import type { CallerAccess, CallerIdentity } from '@app/identity';
import { JsonRpcCode } from '@app/wire';
import { errorEnvelope, messageAnswer, type HttpAnswer } from '../answers/http-answer';
import { sealedCallerKey } from '../sealing/sealed-caller';

/**
 * Who may answer a request the gateway put to a client (a relayed server→client request, or one
 * bridged from a 2026 upstream's input_required): the caller whose call asked, with the grant it
 * had then (docs/security.md "Answers to relayed requests"). Sealed into the request's id
 * beside the gateway identity (the seal's AAD) and an expiry, as `requestState` envelopes are.
 */
export interface AnswerBinding {
  /** sealedCallerKey() of the caller; null when the gateway runs without authentication. */
  readonly caller: string | null;
  /** The caller's grant: `*` everything, `g:<rule key>` under `mcp.access`; null without auth. */
  readonly grant: string | null;
}

/** The binding of the request's caller, from its MethodContext. */
export function answerBinding(
  caller: CallerIdentity | undefined,
  access: CallerAccess | undefined,
): AnswerBinding {
  return {
    caller: sealedCallerKey(caller),
    grant: access === undefined ? null : access.all ? '*' : `g:${access.key}`,
  };
}

/** Whether a sealed payload's `c` and `g` are this binding. */
export function boundTo(
  payload: Readonly<Record<string, unknown>>,
  binding: AnswerBinding,
): boolean {
  return (payload.c ?? null) === binding.caller && (payload.g ?? null) === binding.grant;
}

/**
 * What became of a client's JSON-RPC response: not an id of this kind (`not-ours`: the next
 * kind is tried), `delivered` to whoever waits for it, refused because it does not open here
 * (`foreign`: forged, or sealed by another gateway identity), was issued to another caller or
 * grant (`other-caller`), or came too late (`expired`).
 */
export type AnswerDelivery =
  | 'not-ours'
  | 'delivered'
  | 'foreign'
  | 'other-caller'
  | 'expired'
  /** No call waits for it any more (ended), or its request was answered already. */
  | 'not-waited'
  /** The replica holding the call could not be reached now (Redis did not answer). */
  | 'unreachable';

/**
 * The HTTP answer to a response that was not taken (Streamable HTTP: a response the server
 * cannot accept gets an error status, its body a JSON-RPC error without id): 403 for another
 * caller's id, 400 for an expired or foreign one or one no call waits for, 503 (with
 * Retry-After) for one whose call could not be reached now; undefined for the others (202).
 */
export function refusedAnswer(delivery: AnswerDelivery): HttpAnswer | undefined {
  switch (delivery) {
    case 'other-caller':
      return messageAnswer(
        403,
        errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: this answer is to a request the gateway put to another caller; it was not delivered',
        ),
        'json',
      );
    case 'expired':
      return messageAnswer(
        400,
        errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: the request this answers has expired (session.pendingInputMillis); it was not delivered',
        ),
        'json',
      );
    case 'foreign':
      return messageAnswer(
        400,
        errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: the id of this answer was not issued by this gateway (altered, or sealed by another gateway or with a retired key); it was not delivered',
        ),
        'json',
      );
    case 'not-waited':
      return messageAnswer(
        400,
        errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: no call waits for this answer any more (it ended, or this request was answered already); it was not delivered',
        ),
        'json',
      );
    case 'unreachable':
      return messageAnswer(
        503,
        errorEnvelope(
          null,
          JsonRpcCode.InternalError,
          'The call waiting for this answer cannot be reached now (the gateway replicas share it through Redis, which did not answer); it was not delivered: send the same answer again',
        ),
        'json',
        { 'retry-after': '2' },
      );
    case 'not-ours':
    case 'delivered':
      return undefined;
  }
}
