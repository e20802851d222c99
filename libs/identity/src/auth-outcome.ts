import type { CallerIdentity } from './caller-identity';

/** Seconds a client is asked to wait (Retry-After) when the authorization server failed. */
export const AUTH_RETRY_AFTER_SECONDS = 5;

/**
 * What the resource server decided about one request (docs/operations.md §13): `anonymous` when
 * `mcp.auth.mode` is `none`; `refused` carries the HTTP status and the RFC 6750 error, whose
 * description never contains the token. Status 503 (`temporarily_unavailable`, with
 * `retryAfterSeconds`) means the token could not be checked at all: the authorization server
 * (JWKS or introspection) was unreachable, too slow or failed (docs/security.md, "Refusals");
 * the client keeps its token and retries.
 */
export type AuthOutcome =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'authenticated'; readonly caller: CallerIdentity }
  | {
      readonly kind: 'refused';
      /** 401: no token or a bad one; 403: a valid token without a required scope; 503: the authorization server failed. */
      readonly status: 401 | 403 | 503;
      /** RFC 6750 §3.1 error code (RFC 6749's temporarily_unavailable with 503); undefined when the request carried no token at all. */
      readonly error?:
        'invalid_token' | 'insufficient_scope' | 'invalid_request' | 'temporarily_unavailable';
      /** A fixed, human-readable reason (never a token or a claim value). */
      readonly description: string;
      /** With insufficient_scope: the scopes needed, space-separated. */
      readonly scope?: string;
      /** With 503: the Retry-After, in seconds. */
      readonly retryAfterSeconds?: number;
    };
