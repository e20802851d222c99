import type { CallerIdentity } from '@app/identity';
import type { AdminBearerVerifier, AuthorizationServerUnavailable } from './admin-authenticator';

/**
 * The face of the /mcp ResourceServer (libs/identity) this adapter needs: `enabled` when
 * `mcp.auth.mode` is `jwt`, and `verifyBearer(Authorization header)` resolving to
 * `{kind: 'authenticated', caller}` for a verified token.
 */
export interface BearerResourceServer {
  readonly enabled: boolean;
  /**
   * Whether a verified token names the gateway's own audience (`server` undefined), not only a
   * virtual server's path URL (docs/operations.md §16): only such a token may be an admin's.
   */
  servesOn(caller: CallerIdentity, server: undefined): boolean;
  verifyBearer(authorization: string): Promise<{
    readonly kind: string;
    readonly caller?: CallerIdentity;
    readonly status?: number;
    readonly description?: string;
    readonly retryAfterSeconds?: number;
  }>;
}

/**
 * The admin bearer check from the /mcp resource server (docs/operations.md §15 "Access"): null when
 * `mcp.auth.mode` is not `jwt` (the static MCP_ADMIN_TOKEN applies then). Provided under
 * ADMIN_BEARER_VERIFIER by AdminModule. A token refused by the resource server (invalid, or lacking
 * one of `mcp.auth.requiredScopes`) is not an admin token; one the authorization server could
 * not check (a 503 refusal: JWKS or introspection failed) is `unavailable`, answered 503.
 */
export function adminVerifierFrom(server: BearerResourceServer): AdminBearerVerifier | null {
  if (!server.enabled) return null;
  return {
    async verify(
      token: string,
    ): Promise<CallerIdentity | undefined | AuthorizationServerUnavailable> {
      const outcome = await server.verifyBearer(`Bearer ${token}`);
      if (outcome.kind === 'refused' && outcome.status === 503)
        return {
          unavailable: true,
          reason: outcome.description ?? 'the authorization server is unavailable',
          retryAfterSeconds: outcome.retryAfterSeconds ?? 5,
        };
      // a token issued for one virtual server's path is that path's, never the admin's
      return outcome.kind === 'authenticated' &&
        outcome.caller !== undefined &&
        server.servesOn(outcome.caller, undefined)
        ? outcome.caller
        : undefined;
    },
  };
}
