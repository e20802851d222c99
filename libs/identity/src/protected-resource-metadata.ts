import type { AuthConfig } from '@app/config';

/** The RFC 9728 well-known path prefix. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The URL of this resource's metadata document (RFC 9728 §3.1): the well-known prefix
 * inserted between the audience's origin and its path, e.g. https://gw/mcp →
 * https://gw/.well-known/oauth-protected-resource/mcp. This is what `resource_metadata` in
 * WWW-Authenticate points at.
 */
export function resourceMetadataUrl(audience: string): string {
  const url = new URL(audience);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_PATH}${path}${url.search}`;
}

/**
 * The paths on the MCP port that serve the metadata document: the bare well-known path, and
 * the one with the resource's path appended (RFC 9728 §3; e.g. `/.well-known/oauth-protected-resource/mcp`).
 */
export function resourceMetadataPaths(audience: string): string[] {
  const path = new URL(audience).pathname.replace(/\/+$/, '');
  return path === ''
    ? [PROTECTED_RESOURCE_PATH]
    : [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${path}`];
}

/** The metadata document (RFC 9728 §2) for `mcp.auth` with mode jwt. */
export function protectedResourceMetadata(auth: AuthConfig): Record<string, unknown> {
  return {
    resource: auth.audience,
    authorization_servers:
      auth.authorizationServers ?? (auth.issuer === undefined ? [] : [auth.issuer]),
    scopes_supported: auth.scopesSupported ?? auth.requiredScopes,
    bearer_methods_supported: ['header'],
  };
}

/** A quoted-string for an auth-param (RFC 9110 §5.6.4): backslash and quote escaped. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `WWW-Authenticate` value of a refusal (RFC 6750 §3, RFC 9728 §5.1): `Bearer
 * resource_metadata="…"`, plus `error`, `error_description` and `scope` when given.
 */
export function wwwAuthenticate(
  metadataUrl: string,
  error?: string,
  description?: string,
  scope?: string,
): string {
  const params = [`resource_metadata=${quoted(metadataUrl)}`];
  if (error !== undefined) params.push(`error=${quoted(error)}`);
  if (description !== undefined) params.push(`error_description=${quoted(description)}`);
  if (scope !== undefined) params.push(`scope=${quoted(scope)}`);
  return `Bearer ${params.join(', ')}`;
}
