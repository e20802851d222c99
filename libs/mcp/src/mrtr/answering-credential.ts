import { callerExpired } from '@app/identity';
import type { MethodContext } from '../methods/method-handler';

/**
 * The answering request's credential (its headers and caller), handed to the call that waits
 * for the answer as a function: a function does not survive the JSON of a resume from another
 * replica (InputHandoff), so no token ever crosses Redis.
 */
export type AnsweringCredential = () => Pick<MethodContext, 'headers' | 'caller' | 'credential'>;

export function answeringCredential(context: MethodContext): AnsweringCredential {
  const { headers, caller, credential } = context;
  return () => ({ headers, caller, credential });
}

/**
 * What a call's continuation goes to the upstream with — its answer to the upstream's request
 * (a parked call), the retry round after the client's answers (a bridged one) — per
 * docs/security.md "Answers to relayed requests": the answering request's credential when the
 * answer reached this replica, else the call's own, and never a token that has expired since
 * (undefined: the continuation may not be sent; the call ends). A token whose caller carries no
 * expiry (an introspected one without `exp`, auth off) is sent as it is.
 */
export function continuationContext(
  call: MethodContext,
  answering: AnsweringCredential | undefined,
  nowMs = Date.now(),
): MethodContext | undefined {
  const context = answering === undefined ? call : { ...call, ...answering() };
  return callerExpired(context.caller, nowMs) ? undefined : context;
}

/** What a client is told when its call ended because no credential that may be sent was left. */
export const CREDENTIAL_EXPIRED_TEXT =
  "The caller's token expired while the call waited for the client's input, and the gateway " +
  'sends no expired credential upstream; call again with a fresh token';
