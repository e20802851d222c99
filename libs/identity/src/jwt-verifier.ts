import type * as Jose from 'jose';
import type { JWTPayload } from 'jose';

/**
 * jose, loaded by the first verifier: a gateway without JWT auth never loads it (it is about
 * 0.7 MB of an idle gateway's heap).
 */
function jose(): typeof Jose {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('jose') as typeof Jose;
}

/** How often the key set is fetched again in the background, in ms (a rotation or a removed key is seen within it). */
export const JWKS_REFRESH_MS = 60_000;
/** Least time between two fetches caused by an unknown `kid`, in ms (jose's cooldownDuration). */
export const JWKS_COOLDOWN_MS = 15_000;

/** Why a JWT was refused: a fixed reason for the 401's error_description. */
export type JwtRejection = { readonly ok: false; readonly reason: string };
/** A verified JWT's payload, or why it was refused. */
export type JwtVerdict = { readonly ok: true; readonly payload: JWTPayload } | JwtRejection;

/** What jwtVerify is asked to check (issue 12 §1). */
export interface JwtVerifierOptions {
  readonly jwksUrl: string;
  readonly issuer: string;
  /** The canonical resource URI, matched against `aud` (RFC 8707). */
  readonly audience: string;
  readonly algorithms: readonly string[];
  /** Tolerance for exp/nbf/iat, seconds. */
  readonly clockSkewSeconds: number;
}

/** jose error code → the reason told to the client (never the token or a claim value). */
function rejectionOf(err: unknown): JwtRejection {
  const code = (err as { code?: unknown; claim?: unknown } | null)?.code;
  const claim = (err as { claim?: unknown } | null)?.claim;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return { ok: false, reason: 'The access token has expired' };
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'aud')
        return { ok: false, reason: 'The access token was not issued for this resource' };
      if (claim === 'iss')
        return { ok: false, reason: 'The access token was not issued by a trusted issuer' };
      if (claim === 'nbf') return { ok: false, reason: 'The access token is not valid yet' };
      return { ok: false, reason: 'The access token has an invalid claim' };
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return { ok: false, reason: 'The access token was signed by an unknown key' };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { ok: false, reason: 'The access token signature is invalid' };
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return {
        ok: false,
        reason: 'The access token is signed with an algorithm that is not accepted',
      };
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JOSE_GENERIC':
      return {
        ok: false,
        reason: 'The access token could not be verified (signing keys unavailable)',
      };
    default:
      return { ok: false, reason: 'The access token is malformed or invalid' };
  }
}

/**
 * Verifies JWT access tokens with jose: signature against the issuer's JWKS, `iss`, `aud`,
 * `exp`/`nbf` with the clock skew, and only the configured algorithms (never `none`). The key
 * set is cached without an age limit and fetched again in the background every
 * JWKS_REFRESH_MS (and once at construction), keeping the last good set when that fetch fails; an unknown `kid` fetches
 * it at once (at most every JWKS_COOLDOWN_MS). So a rotation is picked up within a minute and
 * a JWKS outage never blocks tokens signed by a key already known.
 */
export class JwtVerifier {
  private readonly keys: ReturnType<typeof Jose.createRemoteJWKSet>;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: JwtVerifierOptions) {
    this.keys = jose().createRemoteJWKSet(new URL(options.jwksUrl), {
      cacheMaxAge: Infinity,
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: 5_000,
    });
    // fetched once at boot, so the first request does not wait for it and a JWKS outage that
    // starts later finds the keys already known
    this.keys.reload().catch(() => undefined);
    this.timer = setInterval(() => {
      // a failed fetch keeps the keys already known (jose replaces them only on success)
      this.keys.reload().catch(() => undefined);
    }, JWKS_REFRESH_MS);
    this.timer.unref();
  }

  /** The verified payload, or why the token is refused. */
  async verify(token: string): Promise<JwtVerdict> {
    try {
      const { payload } = await jose().jwtVerify(token, this.keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: [...this.options.algorithms],
        clockTolerance: this.options.clockSkewSeconds,
      });
      return { ok: true, payload };
    } catch (err) {
      return rejectionOf(err);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
