import { CREDENTIAL_HEADERS, PERSONAL_CALLER_HEADERS, UNFORWARDABLE_HEADERS } from '@app/wire';
import { invalid, type ConfigProblem } from './config-problem';
import type { BundleConfig, McpConfig } from './mcp-config.model';
import { isObject, urlProblem } from './config-rules';
import type { UpstreamConfig } from './upstream-config.model';

/**
 * Headers a runtime registration's `forwardHeaders` may not name either, beyond
 * UNFORWARDABLE_HEADERS: the ones that carry a caller's credentials, set by auth proxies in
 * front of the gateway (oauth2-proxy, AWS ALB, Azure App Service, Google IAP) or by clients,
 * and the personal caller headers that identify the caller to a Tool Service (the encrypted
 * employee numbers, redacted like Authorization: observability's REDACTED_HEADERS is made of
 * the same two wire lists). Whoever registers chooses the URL, so forwarding them would hand
 * every caller's token or identity to the registrant (docs/security.md, "Runtime
 * registrations"). A configured upstream may still forward such a header: the operator who
 * writes the config chooses its URL too.
 */
export const REGISTRATION_UNFORWARDABLE_HEADERS: ReadonlySet<string> = new Set([
  ...CREDENTIAL_HEADERS,
  ...PERSONAL_CALLER_HEADERS,
  'x-forwarded-authorization',
  'x-forwarded-access-token',
  'x-auth-request-access-token',
  'x-goog-iap-jwt-assertion',
]);

/** Name prefixes and parts that mark a credential-carrying header (lower case). */
const REGISTRATION_UNFORWARDABLE_PREFIXES = ['x-amzn-oidc-', 'x-ms-token-'];
const REGISTRATION_UNFORWARDABLE_PARTS = [
  'token',
  'secret',
  'auth',
  'cookie',
  'session',
  // every kind of key: api-key, Ocp-Apim-Subscription-Key, X-Functions-Key, X-Master-Key, …
  'key',
  'jwt',
  'credential',
  // password, passwd, passphrase, x-pwd
  'pass',
  'pwd',
  'bearer',
  'dpop',
  'signature',
  'assertion',
  'private',
  'csrf',
  'xsrf',
];

/** Whether a runtime registration may not forward this header: it may carry credentials. */
export function isRegistrationUnforwardableHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    REGISTRATION_UNFORWARDABLE_HEADERS.has(lower) ||
    REGISTRATION_UNFORWARDABLE_PREFIXES.some((prefix) => lower.startsWith(prefix)) ||
    REGISTRATION_UNFORWARDABLE_PARTS.some((part) => lower.includes(part))
  );
}

/**
 * The published-name prefix of an upstream: its `namePrefix`, or `<id>__` with every character
 * outside [A-Za-z0-9_-] written as `_` (an id may hold dots, which clients reject in names).
 */
export function upstreamNamePrefix(upstream: Pick<UpstreamConfig, 'id' | 'namePrefix'>): string {
  return upstream.namePrefix ?? `${upstream.id.replace(/[^A-Za-z0-9_-]/g, '_')}__`;
}

/**
 * The rules of `mcp.upstreams[]` that span fields or sources
 * (docs/operations.md §10 "Configuration"): ids unique across bundles and upstreams, http(s) URLs,
 * `""` as namePrefix only for the sole enabled source, header names that may be forwarded, and the
 * env variable of a static authorization. The prefixes of every source are prefixProblems' (one
 * rule over bundles and upstreams); field-level checks come from the decorators of UpstreamConfig.
 */
export function upstreamProblems(mcp: McpConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const bundles: BundleConfig[] = Array.isArray(mcp.bundles) ? mcp.bundles.filter(isObject) : [];
  const rawUpstreams: unknown[] = Array.isArray(mcp.upstreams) ? mcp.upstreams : [];
  const discoveryEnabled = isObject(mcp.discovery) ? mcp.discovery.enabled !== false : true;

  const ids = new Map<string, string>();
  bundles.forEach((b, i) => {
    if (typeof b.id === 'string' && !ids.has(b.id)) ids.set(b.id, `mcp.bundles[${i}]`);
  });
  const enabledSources =
    (discoveryEnabled ? bundles.filter((b) => b.enabled !== false).length : 1) +
    rawUpstreams.filter((u) => isObject(u) && (u as UpstreamConfig).enabled !== false).length;

  rawUpstreams.forEach((raw, i) => {
    if (!isObject(raw)) return;
    const upstream = raw as UpstreamConfig;
    const at = `mcp.upstreams[${i}]`;
    if (typeof upstream.id === 'string') {
      const first = ids.get(upstream.id);
      if (first !== undefined) {
        problems.push({
          path: `${at}.id`,
          code: 'duplicate-id',
          other: first,
          message: `"${upstream.id}" duplicates ${first}.id (ids are unique across bundles and upstreams)`,
        });
      } else {
        ids.set(upstream.id, at);
      }
    }
    if (typeof upstream.url === 'string') {
      const p = urlProblem(upstream.url, { allowQuery: true });
      if (p) problems.push(invalid(`${at}.url`, p));
    }
    if (upstream.namePrefix === '' && enabledSources > 1 && upstream.enabled !== false) {
      problems.push({
        path: `${at}.namePrefix`,
        code: 'shared-empty-prefix',
        message:
          '"" is allowed only when this upstream is the only enabled source ' +
          `(${enabledSources} sources are enabled); names of two sources could collide`,
      });
    }
    if (Array.isArray(upstream.forwardHeaders)) {
      for (const name of upstream.forwardHeaders) {
        if (typeof name === 'string' && UNFORWARDABLE_HEADERS.has(name.toLowerCase())) {
          problems.push(
            invalid(
              `${at}.forwardHeaders`,
              `"${name}" may not be forwarded (a hop-by-hop, framing or MCP transport header, ` +
                'or Authorization, which the authorization setting controls)',
            ),
          );
        }
      }
    }
    // a live list is each caller's, fetched per request: no catalog copy to hold a tool back from
    if (upstream.pinned === true && upstream.lists === 'live') {
      problems.push(
        invalid(
          `${at}.pinned`,
          'a pinned upstream needs lists "snapshot" (the default): tools fetched per ' +
            'request for each caller (lists "live") cannot be held for review (docs/operations.md §6 "Pinned tool definitions")',
        ),
      );
    }
    const auth = isObject(upstream.authorization) ? upstream.authorization : undefined;
    if (auth?.mode === 'static' && (auth.valueEnv === undefined || auth.valueEnv === '')) {
      problems.push(invalid(`${at}.authorization.valueEnv`, 'is required with mode static'));
    }
  });
  return problems;
}
