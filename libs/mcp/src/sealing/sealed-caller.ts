import type { CallerIdentity } from '@app/identity';

/**
 * The caller as a sealed id or envelope binds it — `requestState` envelopes, relay ids and
 * bridge ids (docs/operations.md §11 "Multi round-trip and era bridging"; docs/security.md
 * "Answers to relayed requests"): `sub` and `client_id`; null when the gateway runs without
 * authentication. Not the session/stream owner key (`session/caller-key.ts`): what is sealed
 * keeps this form so that ids and envelopes already handed out still open.
 */
export function sealedCallerKey(caller: CallerIdentity | undefined): string | null {
  if (caller === undefined) return null;
  return `${caller.subject ?? ''}\u0000${caller.clientId ?? ''}`;
}
