/** What an introspection answered about one token (RFC 7662 §2.2), already checked. */
export type IntrospectionResult =
  | { readonly active: true; readonly claims: Readonly<Record<string, unknown>> }
  | { readonly active: false; readonly reason: string };

export interface IntrospectionOptions {
  readonly url: string;
  readonly clientId: string;
  /** A secret: never logged. */
  readonly clientSecret: string;
  readonly issuer?: string;
  /** The canonical resource URI: an answer whose `aud` does not include it is refused. */
  readonly audience: string;
  readonly clockSkewSeconds: number;
  /** Bound of one introspection request, ms. */
  readonly timeoutMs?: number;
}

function audiences(aud: unknown): string[] | undefined {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  return undefined;
}

/**
 * RFC 7662 introspection of opaque tokens: POST `token=…` with the gateway's client
 * credentials (HTTP Basic, §2.1). An active answer is still refused when its `exp` passed,
 * its `aud` (when given) does not include this resource, or its `iss` (when given) is not the
 * issuer. A failed request counts as inactive: the token cannot be shown valid.
 */
export class IntrospectionClient {
  private readonly authorization: string;

  constructor(private readonly options: IntrospectionOptions) {
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
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        return { active: false, reason: 'The access token could not be introspected' };
      }
      const body: unknown = await res.json();
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return { active: false, reason: 'The access token could not be introspected' };
      answer = body as Record<string, unknown>;
    } catch {
      return { active: false, reason: 'The access token could not be introspected' };
    }
    if (answer.active !== true) return { active: false, reason: 'The access token is not active' };
    const skew = this.options.clockSkewSeconds;
    if (typeof answer.exp === 'number' && answer.exp + skew <= nowSeconds)
      return { active: false, reason: 'The access token has expired' };
    if (typeof answer.nbf === 'number' && answer.nbf - skew > nowSeconds)
      return { active: false, reason: 'The access token is not valid yet' };
    const aud = audiences(answer.aud);
    if (aud !== undefined && !aud.includes(this.options.audience))
      return { active: false, reason: 'The access token was not issued for this resource' };
    if (
      this.options.issuer !== undefined &&
      typeof answer.iss === 'string' &&
      answer.iss !== this.options.issuer
    )
      return { active: false, reason: 'The access token was not issued by a trusted issuer' };
    return { active: true, claims: answer };
  }
}
