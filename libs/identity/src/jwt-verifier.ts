import type * as Jose from 'jose';
import type { JWTPayload } from 'jose';
import { hasIdTokenClaims } from './id-token-claims';

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

/**
 * Why a JWT was refused: a fixed reason for the answer's error_description. `unavailable`:
 * the signing keys could not be fetched (JWKS unreachable, slow or failing), so the token
 * was not found bad; the request is answered 503, not 401.
 */
export type JwtRejection = {
  readonly ok: false;
  readonly reason: string;
  readonly unavailable?: true;
  /** With `unavailable`: the key set was fetched, but too lately to fetch it again for this kid. */
  readonly keyNotYetKnown?: true;
};
/** A verified JWT's payload, or why it was refused. */
export type JwtVerdict = { readonly ok: true; readonly payload: JWTPayload } | JwtRejection;

/** What jwtVerify is asked to check (docs/security.md "Threat model in one page", mode `jwt`). */
export interface JwtVerifierOptions {
  readonly jwksUrl: string;
  readonly issuer: string;
  /**
   * The canonical resource URIs, matched against `aud` (RFC 8707): the gateway's, and each
   * virtual server's path URL (docs/operations.md §16); which path a token serves is checked
   * per request (ResourceServer.servesOn).
   */
  readonly audience: string | readonly string[];
  readonly algorithms: readonly string[];
  /** Tolerance for exp/nbf/iat, seconds. */
  readonly clockSkewSeconds: number;
  /** Accepted `typ` header values, lower case without `application/`; `none`: a token without typ. */
  readonly tokenTypes: readonly string[];
  /** Bound of one JWKS fetch, ms. */
  readonly timeoutMs: number;
}

/** A key set fetch that failed (not a token that matched no key). */
class KeysUnavailable extends Error {}

/**
 * A `kid` no key set fetched so far has named, while the set may not be fetched again yet
 * (within JWKS_COOLDOWN_MS of the last fetch): the issuer may have just rotated to it.
 */
class KeyNotYetKnown extends Error {}

const KEYS_UNAVAILABLE: JwtRejection = {
  ok: false,
  reason: 'The access token could not be verified: the signing keys are unavailable; retry later',
  unavailable: true,
};

const KEY_NOT_YET_KNOWN: JwtRejection = {
  ok: false,
  reason:
    'The access token could not be verified: it names a signing key the issuer has not published to this gateway yet; retry in a few seconds',
  unavailable: true,
  keyNotYetKnown: true,
};

/** Most key ids remembered as seen in a fetched key set (a removed key's tokens are bad, not new). */
const KIDS_REMEMBERED = 1000;

/** `typ` as RFC 7515 §4.1.9 compares it: case-insensitive, `application/` omitted. */
export function normalTokenType(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/** jose error code → the reason told to the client (never the token or a claim value). */
function rejectionOf(err: unknown): JwtRejection {
  if (err instanceof KeysUnavailable) return KEYS_UNAVAILABLE;
  if (err instanceof KeyNotYetKnown) return KEY_NOT_YET_KNOWN;
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
      if (claim === 'exp')
        return { ok: false, reason: 'The access token has no expiry (exp is required)' };
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
    default:
      return { ok: false, reason: 'The access token is malformed or invalid' };
  }
}

/**
 * Verifies JWT access tokens with jose: signature against the issuer's JWKS, `iss`, `aud`,
 * `exp` (required, RFC 9068 §2.2), `nbf` and `iat` (not ahead of now) with the clock skew,
 * `typ` against `tokenTypes`, no ID-token-only claim, and only the configured algorithms
 * (never `none`). A key set that cannot be fetched is `unavailable`, never a bad token. The key
 * set is cached without an age limit and fetched again in the background every
 * JWKS_REFRESH_MS (and once at construction), keeping the last good set when that fetch fails; an unknown `kid` fetches
 * it at once (at most every JWKS_COOLDOWN_MS). So a rotation is picked up within a minute and
 * a JWKS outage never blocks tokens signed by a key already known.
 */
export class JwtVerifier {
  private readonly keys: ReturnType<typeof Jose.createRemoteJWKSet>;
  private readonly timer: NodeJS.Timeout;
  /** The keys of the set as last fetched, each as its JSON (undefined before the first fetch). */
  private known?: ReadonlySet<string>;
  /** Every `kid` a fetched key set has named (at most KIDS_REMEMBERED, the oldest forgotten). */
  private readonly kidsSeen = new Set<string>();

  /**
   * @param keysRemoved called when a fetch of the key set finds a key of the last one gone: what
   *   was verified with it and remembered must be verified again (ResourceServer)
   */
  constructor(
    private readonly options: JwtVerifierOptions,
    private readonly keysRemoved: () => void = () => undefined,
  ) {
    this.keys = jose().createRemoteJWKSet(new URL(options.jwksUrl), {
      cacheMaxAge: Infinity,
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: options.timeoutMs,
    });
    // fetched once at boot, so the first request does not wait for it and a JWKS outage that
    // starts later finds the keys already known
    void this.refreshKeys();
    this.timer = setInterval(() => void this.refreshKeys(), JWKS_REFRESH_MS);
    this.timer.unref();
  }

  /**
   * Fetches the key set again (a failed fetch keeps the keys already known: jose replaces them
   * only on success) and says when a key of the last set is gone, so that a token of a removed
   * key stops working at once, not when its remembered verification would expire
   * (docs/security.md "a removed key stops working within a minute").
   */
  async refreshKeys(): Promise<void> {
    await this.keys.reload().catch(() => undefined);
    this.noteKids();
    const now = new Set((this.keys.jwks()?.keys ?? []).map((key) => JSON.stringify(key)));
    const before = this.known;
    if (now.size > 0) this.known = now;
    if (before !== undefined && now.size > 0 && [...before].some((key) => !now.has(key)))
      this.keysRemoved();
  }

  /** The verified payload, or why the token is refused. */
  async verify(token: string): Promise<JwtVerdict> {
    try {
      const { payload, protectedHeader } = await jose().jwtVerify(token, this.getKey, {
        issuer: this.options.issuer,
        audience:
          typeof this.options.audience === 'string'
            ? this.options.audience
            : [...this.options.audience],
        algorithms: [...this.options.algorithms],
        clockTolerance: this.options.clockSkewSeconds,
        requiredClaims: ['exp'],
      });
      return this.profileChecked(payload, protectedHeader.typ);
    } catch (err) {
      return rejectionOf(err);
    }
  }

  /** The access-token profile beyond jose's checks: typ, iat not ahead, no ID-token claim. */
  private profileChecked(payload: JWTPayload, typ: string | undefined): JwtVerdict {
    const type = typ === undefined ? 'none' : normalTokenType(typ);
    if (!this.options.tokenTypes.includes(type))
      return {
        ok: false,
        reason:
          typ === undefined
            ? 'The access token has no "typ" header (an access token type is required)'
            : 'The access token has a "typ" that is not an accepted access token type',
      };
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.iat === 'number' && payload.iat > now + this.options.clockSkewSeconds)
      return { ok: false, reason: 'The access token was issued in the future (iat)' };
    if (hasIdTokenClaims(payload))
      return { ok: false, reason: 'The token is an ID token, not an access token' };
    return { ok: true, payload };
  }

  /** The key of a token's header; a key set that cannot be fetched throws KeysUnavailable. */
  private readonly getKey = async (
    header: Jose.JWSHeaderParameters,
    input: Jose.FlattenedJWSInput,
  ): Promise<Jose.CryptoKey> => {
    // jose fetches the set again for an unknown kid unless the last fetch was this recent
    const cooling = this.keys.coolingDown;
    try {
      return await this.keys(header, input);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      // a key set that was fetched but names no such key: the token is bad (401), unless it
      // names our issuer and a kid no fetched set ever named, and the set could not be fetched
      // again for it: the issuer may have just rotated to it (Keycloak signs with a new key at
      // once), and a 401 would have the client throw a valid token away; 503, retry shortly
      if (
        code === 'ERR_JWKS_NO_MATCHING_KEY' &&
        header.kid !== undefined &&
        cooling &&
        this.namesOurIssuer(input)
      ) {
        this.noteKids();
        if (!this.kidsSeen.has(header.kid)) throw new KeyNotYetKnown();
      }
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS')
        throw err;
      // a timeout, a refused connection, a non-200 answer or an unreadable set: 503
      throw new KeysUnavailable();
    }
  };

  /**
   * Whether a token's payload (not verified) names the configured issuer: a token of another
   * issuer is never one of ours, whatever key it names (401, as before any key is looked up).
   */
  private namesOurIssuer(input: Jose.FlattenedJWSInput): boolean {
    try {
      const payload =
        typeof input.payload === 'string'
          ? Buffer.from(input.payload, 'base64url').toString('utf8')
          : Buffer.from(input.payload).toString('utf8');
      const claims: unknown = JSON.parse(payload);
      return (
        typeof claims === 'object' &&
        claims !== null &&
        (claims as { iss?: unknown }).iss === this.options.issuer
      );
    } catch {
      return false;
    }
  }

  /** Notes the kids of the key set as jose holds it now (its own fetches for a kid included). */
  private noteKids(): void {
    for (const key of this.keys.jwks()?.keys ?? []) {
      if (typeof key.kid !== 'string' || this.kidsSeen.has(key.kid)) continue;
      this.kidsSeen.add(key.kid);
      if (this.kidsSeen.size > KIDS_REMEMBERED)
        this.kidsSeen.delete(this.kidsSeen.values().next().value as string);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
