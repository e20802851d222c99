/**
 * Claims only an OpenID Connect ID token carries (OIDC Core §2, §3.3.2.11): an ID token is
 * never taken for an access token, even when it is signed by the issuer and names the
 * audience (Entra ID's v2 ID tokens carry the app's client id as `aud`, as its access tokens do).
 */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'] as const;

/**
 * Whether a token's claims (a verified JWT's payload, or an introspection answer) are an ID
 * token's: an ID-token-only claim, or Keycloak's payload mark `typ: "ID"` (its header says
 * JWT). The same rule on every way a token is checked (docs/security.md "Configuring an
 * identity provider").
 */
export function hasIdTokenClaims(claims: Readonly<Record<string, unknown>>): boolean {
  return claims.typ === 'ID' || ID_TOKEN_CLAIMS.some((claim) => claims[claim] !== undefined);
}
