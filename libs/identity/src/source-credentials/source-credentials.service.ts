import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Dispatcher } from 'undici';
import type { TokenExchangeAuthorization } from '@app/config';
import type { CallerIdentity } from '../caller-identity';
import { ExpiringCache } from './expiring-cache';
import {
  clientCredentialsToken,
  exchangeToken,
  TokenEndpointError,
  type IssuedToken,
} from './token-endpoint';

/** Lifetime assumed, in seconds, for an issued token whose answer states none. */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 60;

/**
 * How long before its expiry an issued token is replaced, in ms: 30 s, or a tenth of its
 * lifetime when that is shorter, so that it never expires on its way to the source.
 */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.min(30_000, lifetimeMs / 10);
}

/** Why no credential could be had for a source; the message is safe for a client (no token). */
export class SourceCredentialError extends Error {
  override readonly name = 'SourceCredentialError';

  /** @param addressRefused the token endpoint's address was refused at connect (a registered upstream) */
  constructor(
    message: string,
    readonly addressRefused = false,
  ) {
    super(message);
  }
}

/**
 * Which exchange configuration a cached token belongs to (one per source in practice): every
 * field the token request sends, the client secret as a digest (a configuration whose secret the
 * authorization server refuses never gets the token another one was issued, e.g. a registration
 * posted again under its id with another secret, docs/operations.md §15 "Deleted means gone").
 * A request through a registered upstream's guarded dispatcher is its own key: its refusal must
 * not fail a configured source's token, nor a configured source's answer spare it the check.
 */
function configKey(auth: TokenExchangeAuthorization, guarded: boolean): string {
  let key = configKeys.get(auth);
  if (key === undefined) {
    const secret = createHash('sha256').update(auth.clientSecret).digest('base64url');
    key = `${auth.tokenEndpoint}\n${auth.clientId}\n${secret}\n${auth.audience}\n${auth.scope ?? ''}`;
    configKeys.set(auth, key);
  }
  return guarded ? `${key}\nguarded` : key;
}
/** configKey's text per settings object (they live as long as their source): one digest each. */
const configKeys = new WeakMap<TokenExchangeAuthorization, string>();

/** The caller's token hashed: cache keys never hold a token. */
function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * Tokens towards sources whose `authorization.mode` is `tokenExchange`
 * (docs/operations.md §14 "Credentials towards sources"): the caller's token exchanged (RFC 8693)
 * for one issued for the source's audience, or for a list pull, which has no caller, the gateway's
 * own client-credentials token for that audience. Each is cached per (caller token, source) until
 * shortly before it expires, one request to the authorization server at a time per key. The
 * caller's own token is never the answer.
 */
@Injectable()
export class SourceCredentials {
  private readonly cache: ExpiringCache<string>;

  /** @param now monotonic ms (tests give their own clock) */
  constructor(now: () => number = () => performance.now()) {
    this.cache = new ExpiringCache<string>(now);
    this.now = now;
  }

  private readonly now: () => number;

  /**
   * The access token to send to the source for this caller.
   * @param dispatcher what to reach the token endpoint through (UpstreamConnections.guardedDispatcher: a registered upstream's)
   * @throws SourceCredentialError without a caller token, or when the exchange fails
   */
  forCaller(
    auth: TokenExchangeAuthorization,
    caller: CallerIdentity | undefined,
    dispatcher?: Dispatcher,
  ): Promise<string> {
    if (caller === undefined || caller.token === '')
      return Promise.reject(
        new SourceCredentialError(
          'token exchange: the request carries no caller token to exchange (mcp.auth.mode is none)',
        ),
      );
    const key = `${configKey(auth, dispatcher !== undefined)}\n${tokenKey(caller.token)}`;
    return this.cache.get(key, () =>
      this.issue(() => exchangeToken(auth, caller.token, dispatcher)),
    );
  }

  /**
   * The gateway's own token for the source (client credentials), for requests without a
   * caller (list pulls).
   * @param dispatcher what to reach the token endpoint through (UpstreamConnections.guardedDispatcher: a registered upstream's)
   * @throws SourceCredentialError when the authorization server refuses or cannot be reached
   */
  forGateway(auth: TokenExchangeAuthorization, dispatcher?: Dispatcher): Promise<string> {
    return this.cache.get(`${configKey(auth, dispatcher !== undefined)}\n-`, () =>
      this.issue(() => clientCredentialsToken(auth, dispatcher)),
    );
  }

  private async issue(
    request: () => Promise<IssuedToken>,
  ): Promise<{ value: string; refreshAt: number }> {
    const asked = this.now();
    let issued: IssuedToken;
    try {
      issued = await request();
    } catch (err) {
      throw err instanceof TokenEndpointError
        ? new SourceCredentialError(err.message, err.addressRefused)
        : new SourceCredentialError('the token request failed unexpectedly');
    }
    // the lifetime counts from when the request was sent: the answer may have been slow
    const lifetimeMs = (issued.expiresInSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS) * 1000;
    return {
      value: issued.accessToken,
      refreshAt: asked + lifetimeMs - refreshMarginMs(lifetimeMs),
    };
  }
}
