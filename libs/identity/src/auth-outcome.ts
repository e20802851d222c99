import type { CallerIdentity } from './caller-identity';

/**
 * What the resource server decided about one request (issue 12 §1, §2): `anonymous` when
 * `mcp.auth.mode` is `none`; `refused` carries the HTTP status and the RFC 6750 error, whose
 * description never contains the token.
 */
export type AuthOutcome =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'authenticated'; readonly caller: CallerIdentity }
  | {
      readonly kind: 'refused';
      /** 401: no token or a bad one; 403: a valid token without a required scope. */
      readonly status: 401 | 403;
      /** RFC 6750 §3.1 error code; undefined when the request carried no token at all. */
      readonly error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request';
      /** A fixed, human-readable reason (never a token or a claim value). */
      readonly description: string;
      /** With insufficient_scope: the scopes needed, space-separated. */
      readonly scope?: string;
    };
