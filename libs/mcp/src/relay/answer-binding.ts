import { createHash } from 'node:crypto';
import type { CallerAccess, CallerIdentity } from '@app/identity';
import { JsonRpcCode } from '@app/wire';
import { errorEnvelope, messageAnswer, type HttpAnswer } from '../answers/http-answer';
import { sealedCallerKey } from '../sealing/sealed-caller';

/**
 * Who may answer a request the gateway put to a client (a relayed server→client request, or one
 * bridged from a 2026 upstream's input_required): the caller whose call asked, with the grant it
 * had then, on the 2025 session the request was put to (docs/security.md "Answers to relayed
 * requests"). Sealed into the request's id beside the gateway identity (the seal's AAD) and an
 * expiry, as `requestState` envelopes are.
 */
export interface AnswerBinding {
  /** sealedCallerKey() of the caller; null when the gateway runs without authentication. */
  readonly caller: string | null;
  /** The caller's grant: `*` everything, `g:<rule key>` under `mcp.access`; null without auth. */
  readonly grant: string | null;
  /**
   * A digest of the client's 2025 session id (MethodContext.sessionId); null without one
   * (stateless mode). 2025-11-25 transports: a client's answer to a server request belongs to
   * the session that was asked, as the SDK servers route it.
   */
  readonly session: string | null;
}

/** The binding of the request's caller and 2025 session, from its MethodContext. */
export function answerBinding(
  caller: CallerIdentity | undefined,
  access: CallerAccess | undefined,
  sessionId: string | undefined,
): AnswerBinding {
  return {
    caller: sealedCallerKey(caller),
    grant: access === undefined ? null : access.all ? '*' : `g:${access.key}`,
    // a digest: the id travels in every relayed request, and need not carry the session's token
    session:
      sessionId === undefined
        ? null
        : createHash('sha256').update(sessionId).digest('base64url').slice(0, 22),
  };
}

/** The members of a sealed payload a binding is written as (`cs` only for a 2025 session). */
export function bindingFields(binding: AnswerBinding): {
  readonly c: string | null;
  readonly g: string | null;
  readonly cs?: string;
} {
  return {
    c: binding.caller,
    g: binding.grant,
    ...(binding.session === null ? {} : { cs: binding.session }),
  };
}

/**
 * How a sealed payload's binding meets the answering request's: `bound`, `other-caller` (its
 * `c` or `g` differ) or `other-session` (the caller's, but answered outside the session it was
 * put to, or without one). A payload without `cs` (put to a client without a session, or sealed
 * by a build before sessions were bound) is not bound to one.
 */
export function boundTo(
  payload: Readonly<Record<string, unknown>>,
  binding: AnswerBinding,
): 'bound' | 'other-caller' | 'other-session' {
  if ((payload.c ?? null) !== binding.caller || (payload.g ?? null) !== binding.grant)
    return 'other-caller';
  return payload.cs === undefined || payload.cs === binding.session ? 'bound' : 'other-session';
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
  /** The caller's, but answered outside the 2025 session it was put to. */
  | 'other-session'
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
    case 'other-session':
      return messageAnswer(
        403,
        errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: this answer is to a request the gateway put to another session (answer with the Mcp-Session-Id it came on); it was not delivered',
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
