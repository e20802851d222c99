import type { ResolvedAuthorization } from '@app/config';

/**
 * The one switch over a source's `authorization.mode`, for bundles and upstreams alike
 * (docs/security.md "Credentials towards sources"): which `Authorization` value a request to
 * the source carries.
 */

/**
 * On a caller's request: `static` the configured value, `passthrough` the caller's own header
 * as it came (its first value; against the MCP security guidance, so opt-in), `tokenExchange`
 * the token issued for this source (`sourceToken`), never the caller's; `none` nothing.
 * Undefined: no Authorization header.
 */
export function callerAuthorization(
  authorization: ResolvedAuthorization,
  incoming: string | readonly string[] | undefined,
  sourceToken?: string,
): string | undefined {
  switch (authorization.mode) {
    case 'none':
      return undefined;
    case 'passthrough':
      return typeof incoming === 'string' ? incoming : incoming?.[0];
    case 'static':
      return authorization.value;
    case 'tokenExchange':
      return sourceToken === undefined ? undefined : `Bearer ${sourceToken}`;
  }
}

/**
 * On the gateway's own traffic (a shared session's initialize, GET stream and DELETE, list and
 * manifest pulls): `static` the configured value, `tokenExchange` the gateway's
 * client-credentials token (`gatewayToken`), otherwise nothing; never a caller's header.
 */
export function gatewayAuthorization(
  authorization: ResolvedAuthorization,
  gatewayToken?: string,
): string | undefined {
  switch (authorization.mode) {
    case 'static':
      return authorization.value;
    case 'tokenExchange':
      return gatewayToken === undefined ? undefined : `Bearer ${gatewayToken}`;
    case 'none':
    case 'passthrough':
      return undefined;
  }
}
