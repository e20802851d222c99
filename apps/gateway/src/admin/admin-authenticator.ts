import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { bearerToken, callerName, type CallerIdentity } from '@app/identity';

/**
 * Verifies a bearer token for /admin when `mcp.auth.mode` is `jwt`
 * (docs/operations.md §15 "Access"): the /mcp resource server provides it under
 * ADMIN_BEARER_VERIFIER. Resolves the caller, or undefined for a token that is not valid (bad
 * signature, expired, wrong audience…); never throws for a bad token.
 */
export interface AdminBearerVerifier {
  verify(token: string): Promise<CallerIdentity | undefined | AuthorizationServerUnavailable>;
}

/** The token could not be checked: the authorization server failed (answered 503, not 401). */
export interface AuthorizationServerUnavailable {
  readonly unavailable: true;
  readonly reason: string;
  readonly retryAfterSeconds: number;
}

export const ADMIN_BEARER_VERIFIER = Symbol('ADMIN_BEARER_VERIFIER');

/** Who made an admin request, for the audit line and `createdBy`. */
export interface AdminActor {
  /** With JWT the caller key (`sub:<sub>`, else `client:<client_id>`); `admin-token` for the static token. */
  readonly name: string;
  readonly via: 'jwt' | 'static-token' | 'anonymous';
}

/** The outcome of checking a request's `Authorization` header against the admin role. */
export type AdminDecision =
  | { readonly kind: 'admin'; readonly actor: AdminActor }
  /** No admin check is configured: reads are open, writes disabled. */
  | { readonly kind: 'unconfigured'; readonly actor: AdminActor }
  /** 401: no bearer token, or one that does not verify. */
  | { readonly kind: 'unauthenticated'; readonly reason: string }
  /** 403: a valid token without the admin scope. */
  | { readonly kind: 'forbidden'; readonly reason: string; readonly actor: AdminActor }
  /** 503: the authorization server could not check the token (JWKS or introspection failed). */
  | { readonly kind: 'unavailable'; readonly reason: string; readonly retryAfterSeconds: number };

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The admin role (docs/operations.md §15 "Access"): with a bearer verifier (`mcp.auth.mode: jwt`),
 * a token that verifies and carries `mcp.admin.scope`; otherwise the static token of
 * `MCP_ADMIN_TOKEN`, compared in constant time (both sides hashed to 32 bytes first, so the length
 * leaks nothing either). With neither, `configured` is false: /admin is read-only.
 */
@Injectable()
export class AdminAuthenticator {
  private readonly staticDigest?: Buffer;
  private readonly scope: string;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional()
    @Inject(ADMIN_BEARER_VERIFIER)
    private readonly verifier: AdminBearerVerifier | null = null,
  ) {
    const token = config.admin?.token;
    this.staticDigest = token === undefined ? undefined : digest(token);
    this.scope = config.admin?.scope ?? 'mcp:admin';
  }

  /** Whether any admin check is configured (writes are possible at all). */
  get configured(): boolean {
    return this.verifier !== null || this.staticDigest !== undefined;
  }

  /** How admins authenticate, for messages and the boot log. */
  get method(): 'jwt' | 'static-token' | 'none' {
    return this.verifier !== null
      ? 'jwt'
      : this.staticDigest !== undefined
        ? 'static-token'
        : 'none';
  }

  /**
   * What /admin takes under `mcp.auth.mode: jwt`, for a 401: an operator who sends the static
   * token (the chart README maps it from a Secret) learns why it opens nothing
   * (docs/operations.md §15 "Access"). A fixed text: it names no record and no token.
   */
  private jwtHint(): string {
    return `with mcp.auth.mode jwt, /admin takes an access token of mcp.auth with the admin scope "${this.scope}" (MCP_ADMIN_TOKEN is not accepted)`;
  }

  /** Checks an `Authorization` header value. Never throws. */
  async authenticate(header: string | undefined): Promise<AdminDecision> {
    if (!this.configured)
      return { kind: 'unconfigured', actor: { name: 'anonymous', via: 'anonymous' } };
    const token = bearerToken(header);
    if (token === undefined)
      return {
        kind: 'unauthenticated',
        reason:
          this.verifier !== null
            ? `the /admin API needs "Authorization: Bearer <token>": ${this.jwtHint()}`
            : 'the /admin API needs "Authorization: Bearer <admin token>"',
      };
    if (this.verifier !== null) {
      let caller: CallerIdentity | undefined | AuthorizationServerUnavailable;
      try {
        caller = await this.verifier.verify(token);
      } catch {
        caller = undefined;
      }
      if (caller !== undefined && 'unavailable' in caller)
        return {
          kind: 'unavailable',
          reason: `the bearer token could not be checked: ${caller.reason}`,
          retryAfterSeconds: caller.retryAfterSeconds,
        };
      if (caller === undefined)
        return {
          kind: 'unauthenticated',
          reason: `the bearer token is not valid: ${this.jwtHint()}`,
        };
      const actor: AdminActor = { name: callerName(caller) ?? 'unknown', via: 'jwt' };
      if (!caller.scopes.includes(this.scope))
        return {
          kind: 'forbidden',
          reason: `the token lacks the admin scope "${this.scope}"`,
          actor,
        };
      return { kind: 'admin', actor };
    }
    const expected = this.staticDigest;
    if (expected === undefined || !timingSafeEqual(digest(token), expected))
      return { kind: 'unauthenticated', reason: 'the bearer token is not the admin token' };
    return { kind: 'admin', actor: { name: 'admin-token', via: 'static-token' } };
  }
}
