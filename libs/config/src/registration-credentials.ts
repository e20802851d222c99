import type { McpConfig } from './mcp-config.model';
import type { UpstreamConfig } from './upstream-config.model';

/**
 * Where a runtime registration may send a caller's credential (docs/security.md, "Runtime
 * registrations"). The person who registers an upstream chooses its URL; without these rules
 * they would also choose where every caller's gateway token goes:
 *
 * - `passthrough` sends each caller's own token (audience: this gateway, so it replays against
 *   `/mcp`) to the registered server: never accepted for a registration, only in config.
 * - `tokenExchange` sends each caller's token as the `subject_token` to `tokenEndpoint`: the
 *   endpoint must be one the configuration trusts already, i.e. the `tokenEndpoint` of a
 *   configured source (bundle or upstream, enabled or not), or an endpoint at the origin of
 *   `mcp.auth.issuer` or of an entry of `mcp.auth.authorizationServers`.
 *
 * Returns the problems, each naming the field. Field shapes are the decorators' job.
 */
export function registrationCredentialProblems(
  upstream: Pick<UpstreamConfig, 'authorization'>,
  mcp: Pick<McpConfig, 'auth' | 'bundles' | 'upstreams'>,
): string[] {
  const auth = upstream.authorization as Partial<UpstreamConfig['authorization']> | null;
  // a mapping of the wrong shape is named by the field decorators
  if (typeof auth !== 'object' || auth === null) return [];
  if (auth.mode === 'passthrough')
    return [
      'authorization.mode: passthrough is not accepted for a registered upstream: it would send ' +
        "every caller's own gateway token to the registered server; use static (valueEnv), " +
        'tokenExchange (at a token endpoint the configuration names) or none, or configure the ' +
        'upstream in mcp.upstreams[]',
    ];
  if (auth.mode !== 'tokenExchange' || typeof auth.tokenEndpoint !== 'string') return [];
  const endpoint = parse(auth.tokenEndpoint);
  // a malformed URL is named by the tokenExchange rules (resolveAuthorization)
  if (endpoint === undefined) return [];
  if (configuredTokenEndpoints(mcp).has(endpoint.href)) return [];
  if (issuerOrigins(mcp).has(endpoint.origin)) return [];
  return [
    'authorization.tokenEndpoint: is not a token endpoint the configuration trusts; a ' +
      'registration may name the tokenEndpoint of a configured bundle or upstream, or an ' +
      'endpoint at the origin of mcp.auth.issuer (or mcp.auth.authorizationServers): every ' +
      "caller's token is sent there",
  ];
}

function parse(raw: string): URL | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The token endpoints of configured sources, as the URL parser writes them. */
function configuredTokenEndpoints(
  mcp: Pick<McpConfig, 'bundles' | 'upstreams'>,
): ReadonlySet<string> {
  const out = new Set<string>();
  for (const source of [...mcp.bundles, ...mcp.upstreams]) {
    const raw = source.authorization?.tokenEndpoint;
    const url = typeof raw === 'string' ? parse(raw) : undefined;
    if (url !== undefined) out.add(url.href);
  }
  return out;
}

/** The origins of the configured issuer and authorization servers. */
function issuerOrigins(mcp: Pick<McpConfig, 'auth'>): ReadonlySet<string> {
  const out = new Set<string>();
  for (const raw of [mcp.auth.issuer, ...(mcp.auth.authorizationServers ?? [])]) {
    const url = typeof raw === 'string' ? parse(raw) : undefined;
    if (url !== undefined) out.add(url.origin);
  }
  return out;
}
