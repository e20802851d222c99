import { invalid, type ConfigProblem } from './config-problem';
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
 * - the token asked there is for the registration's `audience` and `scope`: never this
 *   gateway's audience (the token would replay against `/mcp`) or an authorization server's,
 *   never a configured source's (the registrant would collect tokens meant for that source),
 *   never an upstream's registered before it (a clash, 409: the first registration keeps it),
 *   and never with the admin scope (it would be an admin token).
 *
 * Returns the problems, each naming the field. Field shapes are the decorators' job.
 */
export function registrationCredentialProblems(
  upstream: Pick<UpstreamConfig, 'authorization'>,
  mcp: Pick<McpConfig, 'auth' | 'bundles' | 'upstreams'>,
  adminScope?: string,
  registered: readonly Pick<UpstreamConfig, 'id' | 'authorization'>[] = [],
): ConfigProblem[] {
  const auth = upstream.authorization as Partial<UpstreamConfig['authorization']> | null;
  // a mapping of the wrong shape is named by the field decorators
  if (typeof auth !== 'object' || auth === null) return [];
  if (auth.mode === 'passthrough')
    return [
      invalid(
        'authorization.mode',
        'passthrough is not accepted for a registered upstream: it would send ' +
          "every caller's own gateway token to the registered server; use static (valueEnv), " +
          'tokenExchange (at a token endpoint the configuration names) or none, or configure the ' +
          'upstream in mcp.upstreams[]',
      ),
    ];
  if (auth.mode !== 'tokenExchange') return [];
  return [...endpointProblems(auth, mcp), ...audienceProblems(auth, mcp, adminScope, registered)];
}

function endpointProblems(
  auth: Partial<UpstreamConfig['authorization']>,
  mcp: Pick<McpConfig, 'auth' | 'bundles' | 'upstreams'>,
): ConfigProblem[] {
  if (typeof auth.tokenEndpoint !== 'string') return [];
  const endpoint = parse(auth.tokenEndpoint);
  // a malformed URL is named by the tokenExchange rules (resolveAuthorization)
  if (endpoint === undefined) return [];
  if (configuredTokenEndpoints(mcp).has(endpoint.href)) return [];
  if (issuerOrigins(mcp).has(endpoint.origin)) return [];
  return [
    invalid(
      'authorization.tokenEndpoint',
      'is not a token endpoint the configuration trusts; a ' +
        'registration may name the tokenEndpoint of a configured bundle or upstream, or an ' +
        'endpoint at the origin of mcp.auth.issuer (or mcp.auth.authorizationServers): every ' +
        "caller's token is sent there",
    ),
  ];
}

/**
 * The audience and scope of the tokens issued for the registered server: never ones the
 * gateway, a configured source or an earlier registration accepts, since the registrant
 * receives them.
 */
function audienceProblems(
  auth: Partial<UpstreamConfig['authorization']>,
  mcp: Pick<McpConfig, 'auth' | 'bundles' | 'upstreams'>,
  adminScope: string | undefined,
  registered: readonly Pick<UpstreamConfig, 'id' | 'authorization'>[],
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (typeof auth.audience === 'string') {
    const audience = audienceKey(auth.audience);
    const gatewayUrl = parse(mcp.auth.audience ?? '');
    const gatewayOrigin = gatewayUrl === undefined ? undefined : originKey(gatewayUrl);
    const claimed = parse(auth.audience.trim());
    const own = [mcp.auth.audience, mcp.auth.issuer, ...(mcp.auth.authorizationServers ?? [])];
    const sources = [...mcp.bundles, ...mcp.upstreams].map((s) => s.authorization?.audience);
    if (
      own.some((a) => typeof a === 'string' && audienceKey(a) === audience) ||
      // any resource at the gateway's own origin is the gateway's (/mcp/, /mcp?x, /)
      (gatewayOrigin !== undefined && claimed !== undefined && originKey(claimed) === gatewayOrigin)
    )
      problems.push(
        invalid(
          'authorization.audience',
          "is this gateway's own audience (mcp.auth.audience) or its " +
            "authorization server's: every caller's token for it would go to the registered " +
            'server and replay against /mcp',
        ),
      );
    else if (sources.some((a) => typeof a === 'string' && audienceKey(a) === audience))
      problems.push(
        invalid(
          'authorization.audience',
          'is the audience of a configured bundle or upstream: every ' +
            "caller's token for that source would go to the registered server",
        ),
      );
    else {
      const other = registered.find(
        (r) =>
          typeof r.authorization?.audience === 'string' &&
          audienceKey(r.authorization.audience) === audience,
      );
      if (other !== undefined)
        problems.push({
          path: 'authorization.audience',
          code: 'duplicate-audience',
          message:
            `is the audience of registered upstream "${other.id}": every caller's token ` +
            'for that upstream would go to this server too',
          other: other.id,
        });
    }
  }
  if (
    adminScope !== undefined &&
    typeof auth.scope === 'string' &&
    auth.scope.split(/\s+/).includes(adminScope)
  )
    problems.push(
      invalid(
        'authorization.scope',
        `includes the admin scope (mcp.admin.scope, ${adminScope}): ` +
          'the registered server would receive admin tokens for every caller who has it',
      ),
    );
  return problems;
}

/**
 * The tokenExchange audience a registration claims, as compared (audienceKey), or undefined
 * for one without: the registration store takes it once, like the id and the prefix, so two
 * replicas never both hand it out (docs/security.md "Runtime registrations").
 */
export function registrationAudienceKey(
  upstream: Pick<UpstreamConfig, 'authorization'>,
): string | undefined {
  const auth = upstream.authorization as Partial<UpstreamConfig['authorization']> | null;
  if (typeof auth !== 'object' || auth === null || auth.mode !== 'tokenExchange') return undefined;
  return typeof auth.audience === 'string' ? audienceKey(auth.audience) : undefined;
}

/**
 * An audience as compared (docs/operations.md §15 "URLs compared normalized"): a URL in the
 * RFC 3986 §6.2.2 normal form — scheme and host lower-cased, default port dropped and dot
 * segments, `%2E` ones too, removed (by the URL parser), one trailing root dot of the host dropped
 * (`owner.example.` names `owner.example`), percent-encoded unreserved characters decoded and
 * the hex of the others upper-cased (§6.2.2.2: `/%6Dcp` is `/mcp`) — without its trailing
 * slashes, query and fragment; anything else as written. Every spelling of one audience has
 * one key, so a registration can claim none a source or an earlier registration holds.
 */
export function audienceKey(raw: string): string {
  const url = parse(raw.trim());
  if (url === undefined) return raw.trim();
  const path = url.pathname.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9\-._~]$/.test(c) ? c : `%${hex.toUpperCase()}`;
  });
  return `${originKey(url)}${path.replace(/\/+$/, '')}`;
}

/** A URL's origin as compared: the parser's, without one trailing root dot of the host. */
function originKey(url: URL): string {
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}`;
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
