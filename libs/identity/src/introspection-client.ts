import { hasIdTokenClaims } from './id-token-claims';

/**
 * What an introspection answered about one token (RFC 7662 §2.2), already checked:
 * `unavailable` when the authorization server could not answer (unreachable, slower than the
 * timeout, a non-200 status or a body that is no JSON object): the token was not found bad.
 */
export type IntrospectionResult =
  | { readonly active: true; readonly claims: Readonly<Record<string, unknown>> }
  | { readonly active: false; readonly reason: string; readonly unavailable?: true };

export interface IntrospectionOptions {
  readonly url: string;
  readonly clientId: string;
  /** A secret: never logged. */
  readonly clientSecret: string;
  readonly issuer?: string;
  /**
   * The canonical resource URIs: an answer whose `aud` is missing or includes none of them is
   * refused (the gateway's, and each virtual server's path URL, docs/operations.md §16).
   */
  readonly audience: string | readonly string[];
  readonly clockSkewSeconds: number;
  /** Bound of one introspection request, ms. */
  readonly timeoutMs: number;
}

function audiences(aud: unknown): string[] | undefined {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  return undefined;
}

/** Why an introspection could not be had (for the warn line: a status, never the body). */
export type IntrospectionFailure = { readonly status?: number; readonly cause: string };

const UNAVAILABLE: IntrospectionResult = {
  active: false,
  reason:
    'The access token could not be introspected: the authorization server is unavailable; retry later',
  unavailable: true,
};

/**
 * RFC 7662 introspection of opaque tokens: POST `token=…` with the gateway's client
 * credentials (HTTP Basic, §2.1). An active answer is still refused when its `exp` passed,
 * its `iat` is ahead of now, it has no `aud` or its `aud` does not include this resource
 * (an answer without `aud` could be for any resource), or its `iss` (when given) is not the
 * issuer. A request that fails is `unavailable` (answered 503 by the resource server).
 */
export class IntrospectionClient {
  private readonly authorization: string;

  constructor(
    private readonly options: IntrospectionOptions,
    private readonly onFailure: (failure: IntrospectionFailure) => void = () => undefined,
  ) {
    const encode = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
    this.authorization = `Basic ${Buffer.from(`${encode(options.clientId)}:${encode(options.clientSecret)}`).toString('base64')}`;
  }

  async introspect(token: string, nowSeconds: number): Promise<IntrospectionResult> {
    let answer: Record<string, unknown>;
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: this.authorization,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'manual',
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        this.onFailure({ status: res.status, cause: `HTTP ${res.status}` });
        return UNAVAILABLE;
      }
      const body: unknown = await res.json();
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        this.onFailure({ status: 200, cause: 'the answer is not a JSON object' });
        return UNAVAILABLE;
      }
      answer = body as Record<string, unknown>;
    } catch (err) {
      const name = (err as { name?: unknown } | null)?.name;
      this.onFailure({
        cause:
          name === 'TimeoutError' || name === 'AbortError'
            ? `no answer within ${this.options.timeoutMs} ms`
            : 'unreachable or the answer is unreadable',
      });
      return UNAVAILABLE;
    }
    return this.checked(answer, nowSeconds);
  }

  private checked(answer: Record<string, unknown>, nowSeconds: number): IntrospectionResult {
    if (answer.active !== true) return { active: false, reason: 'The access token is not active' };
    const skew = this.options.clockSkewSeconds;
    if (typeof answer.exp === 'number' && answer.exp + skew <= nowSeconds)
      return { active: false, reason: 'The access token has expired' };
    if (typeof answer.nbf === 'number' && answer.nbf - skew > nowSeconds)
      return { active: false, reason: 'The access token is not valid yet' };
    if (typeof answer.iat === 'number' && answer.iat - skew > nowSeconds)
      return { active: false, reason: 'The access token was issued in the future (iat)' };
    const aud = audiences(answer.aud);
    const accepted = this.options.audience;
    if (
      aud === undefined ||
      !aud.some((a) => (typeof accepted === 'string' ? a === accepted : accepted.includes(a)))
    )
      return { active: false, reason: 'The access token was not issued for this resource' };
    if (
      this.options.issuer !== undefined &&
      typeof answer.iss === 'string' &&
      answer.iss !== this.options.issuer
    )
      return { active: false, reason: 'The access token was not issued by a trusted issuer' };
    // an authorization server may answer active for an ID token it issued (Keycloak does, with
    // `typ: "ID"`): never taken for an access token, as on the JWT path
    if (hasIdTokenClaims(answer))
      return { active: false, reason: 'The token is an ID token, not an access token' };
    return { active: true, claims: answer };
  }
}
