import { createHash } from 'node:crypto';
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

/**
 * A short digest of sealedCallerKey (fixed size: it travels in every task id and task record),
 * '' without authentication: task ids and the gateway's task records bind it, so another OAuth
 * client of the same user is another caller (docs/operations.md §10 "Tasks", "Task ids").
 */
export function sealedCallerDigest(caller: CallerIdentity | undefined): string {
  const key = sealedCallerKey(caller);
  return key === null ? '' : createHash('sha256').update(key).digest('base64url').slice(0, 22);
}
