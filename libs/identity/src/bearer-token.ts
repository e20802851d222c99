/**
 * The access token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1; the scheme is
 * case-insensitive), or undefined when the header is absent, uses another scheme, or carries
 * no token68 value. Tokens are never read from the query string (MCP authorization spec).
 */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  if (value === undefined) return undefined;
  // The one parser of every bearer check (/mcp, /admin, the admin credential on /mcp): spaces
  // or tabs after the scheme, a token68 (base64url/base64 characters, then optional "="
  // padding), trailing blanks ignored. Two parsers would let a form one accepts slip past the
  // other.
  return BEARER.exec(value)?.[1];
}

const BEARER = /^bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/** Whether a token looks like a compact JWS (three base64url parts): verified locally, not introspected. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** Granted scopes from a token's claims: the space-separated `scope` (RFC 8693 §4.2), else `scp`. */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  const { scope, scp } = claims;
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s !== '');
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter((s) => s !== '');
  return [];
}
