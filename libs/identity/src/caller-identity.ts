/**
 * Who is calling `/mcp`, as the gateway's resource server established it from the request's
 * Bearer token (docs/operations.md §13). Built per request from the token alone; never cached
 * beyond the token's lifetime. Absent from a request context when `mcp.auth.mode` is `none`.
 */
export interface CallerIdentity {
  /** The token's `sub` claim; undefined for a client-credentials token without one. */
  readonly subject?: string;
  /** The token's `client_id` (or `azp`) claim, when present. */
  readonly clientId?: string;
  /** Granted scopes (space-separated `scope` claim, or `scp` array), in token order. */
  readonly scopes: readonly string[];
  /** Every verified claim of the token (JWT payload or RFC 7662 introspection answer). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** Seconds since the epoch at which the token expires (`exp`); undefined when it has none. */
  readonly expiresAt?: number;
  /**
   * The caller's raw access token, for token exchange (RFC 8693) and opted-in passthrough
   * towards sources only. Never logged, never put in a metric or an error.
   */
  readonly token: string;
}

/**
 * The caller's key, for rate-limit buckets, audit lines (`caller`), the admin actor and
 * per-caller caches: `sub:<sub>`, else `client:<client_id>` (docs/security.md, "Who is a
 * caller"). Namespaced so that a client-credentials token whose `client_id` equals a user's
 * `sub` is never taken for that user. undefined without a caller (or a token with neither).
 */
export function callerName(caller: CallerIdentity | undefined): string | undefined {
  if (caller === undefined) return undefined;
  // a client-credentials token names the client as its sub too (RFC 9068 §2.2: sub = client_id
  // when no user is involved): that is the client, not a user whose sub happens to be its id
  if (caller.subject !== undefined && caller.subject !== caller.clientId)
    return `sub:${caller.subject}`;
  return caller.clientId === undefined ? undefined : `client:${caller.clientId}`;
}

/** The user the token names: its `sub`, unless that is only the client's own id (see callerName). */
export function callerSubject(caller: CallerIdentity | undefined): string | undefined {
  return caller?.subject !== undefined && caller.subject !== caller.clientId
    ? caller.subject
    : undefined;
}

/**
 * Whether the caller's token has expired by `nowMs`: what a call that outlived it may no longer
 * send upstream (docs/security.md "Answers to relayed requests"). A caller without an expiry
 * (auth off, an introspected token without `exp`) never has.
 */
export function callerExpired(caller: CallerIdentity | undefined, nowMs = Date.now()): boolean {
  const expiresAtMs = callerExpiresAtMs(caller);
  return expiresAtMs !== undefined && expiresAtMs <= nowMs;
}

/**
 * When the caller's token expires, in ms since the epoch (its `exp`, without the clock skew a
 * request is accepted with): what the gateway sends again on its own for the caller stops
 * there. Undefined for a caller without an expiry.
 */
export function callerExpiresAtMs(caller: CallerIdentity | undefined): number | undefined {
  return caller?.expiresAt === undefined ? undefined : caller.expiresAt * 1000;
}
