import { createHash } from 'node:crypto';
import { callerName, type CallerIdentity } from '@app/identity';

/**
 * Who owns a stream or a session, as one string: the token's `sub`, else its `client_id`,
 * each in its own namespace (a client whose `client_id` equals someone's `sub` is another
 * caller). A token with neither is refused before any request is served (ResourceServer), so
 * `unnamed:` is never a caller's key in practice. undefined without a caller (auth off).
 */
export function callerKey(caller: CallerIdentity | undefined): string | undefined {
  if (caller === undefined) return undefined;
  // the same namespaced name as rate limits and the audit line (docs/security.md, "Who is a caller")
  return callerName(caller) ?? 'unnamed:';
}

/** Digests already computed, per verified caller object (a remembered token reuses its object). */
const digests = new WeakMap<CallerIdentity, string>();

/**
 * A short digest of callerKey, what a sealed 2025 session records of the caller that opened
 * it (fixed size: it travels in every session id). undefined without a caller.
 */
export function callerDigest(caller: CallerIdentity | undefined): string | undefined {
  if (caller === undefined) return undefined;
  let digest = digests.get(caller);
  if (digest === undefined) {
    digest = createHash('sha256')
      .update(callerKey(caller) ?? '')
      .digest('base64url')
      .slice(0, 22);
    digests.set(caller, digest);
  }
  return digest;
}
