import { invalid, type ConfigProblem } from './config-problem';
import { shownUrl } from './shown-url';
import { BlockList, isIP } from 'node:net';

/**
 * The URL patterns of `mcp.admin.allowedUpstreamUrls` and the CIDR ranges of
 * `mcp.admin.allowedAddressRanges` (docs/operations.md §15 "What may be registered"), parsed once
 * at boot.
 *
 * A pattern is `scheme://host[:port][/path]`:
 * - scheme `http` or `https`;
 * - host a name or address (lower-cased), `*` (any host) or `*.name` (any host under `name`,
 *   not `name` itself);
 * - port a number or `*`; absent means the scheme's default port (80, 443);
 * - path, when given, a prefix the URL's path must start with at a segment boundary
 *   (`/mcp` matches `/mcp` and `/mcp/x`, not `/mcpx`).
 * Query and fragment of a URL are not compared.
 */
export interface UrlPattern {
  readonly text: string;
  readonly scheme: 'http' | 'https';
  /** Lower-case host, `*`, or `*.suffix`. */
  readonly host: string;
  readonly port: number | '*';
  /** Path prefix without a trailing "/"; "" matches every path. */
  readonly path: string;
}

const DEFAULT_PORTS = { http: 80, https: 443 } as const;
const PATTERN_RE =
  /^(https?):\/\/(\*|(?:\*\.)?[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}|\*))?(\/[^?#\s]*)?$/;

/** Parses one pattern; a string naming what is wrong when it is not one. */
export function parseUrlPattern(text: string): UrlPattern | string {
  const match = PATTERN_RE.exec(text.toLowerCase());
  if (match === null)
    return `must be "http(s)://host[:port][/path]" with host "*", "*.name" or a name, port a number or "*" (got ${shownUrl(text)})`;
  const scheme = match[1] as 'http' | 'https';
  const portText = match[3];
  const port =
    portText === undefined ? DEFAULT_PORTS[scheme] : portText === '*' ? '*' : Number(portText);
  if (port !== '*' && (port < 1 || port > 65535))
    return `port must be 1..65535 or "*" (got ${shownUrl(text)})`;
  return {
    text,
    scheme,
    host: match[2] ?? '',
    port,
    path: (match[4] ?? '').replace(/\/+$/, ''),
  };
}

/** Whether the URL (already checked to be http(s)) matches the pattern. */
export function urlMatches(pattern: UrlPattern, url: URL): boolean {
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== pattern.scheme) return false;
  const host = url.hostname.toLowerCase();
  if (pattern.host.startsWith('*.')) {
    if (!host.endsWith(pattern.host.slice(1))) return false;
  } else if (pattern.host !== '*' && pattern.host !== host) return false;
  const port = url.port === '' ? DEFAULT_PORTS[pattern.scheme] : Number(url.port);
  if (pattern.port !== '*' && pattern.port !== port) return false;
  if (pattern.path === '') return true;
  return url.pathname === pattern.path || url.pathname.startsWith(`${pattern.path}/`);
}

/** One parsed CIDR range. */
export interface AddressRange {
  readonly text: string;
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** Parses `a.b.c.d/n` or `v6addr/n` (a bare address is /32 or /128). */
export function parseAddressRange(text: string): AddressRange | string {
  const [address = '', prefixText, extra] = text.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined)
    return `must be a CIDR range such as 10.0.0.0/8 or fd00::/8 (got "${text}")`;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max)
    return `prefix length must be 0..${max} (got "${text}")`;
  return { text, address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A node:net BlockList holding these ranges. */
export function rangeList(ranges: readonly AddressRange[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family);
  return list;
}

/** Boot problems of `mcp.admin.allowedUpstreamUrls` and `allowedAddressRanges`, one line each. */
export function adminPatternProblems(admin: {
  readonly allowedUpstreamUrls?: unknown;
  readonly allowedAddressRanges?: unknown;
}): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (Array.isArray(admin.allowedUpstreamUrls))
    admin.allowedUpstreamUrls.forEach((entry, i) => {
      if (typeof entry !== 'string') return;
      const parsed = parseUrlPattern(entry);
      if (typeof parsed === 'string')
        problems.push(invalid(`mcp.admin.allowedUpstreamUrls[${i}]`, `${parsed}`));
    });
  if (Array.isArray(admin.allowedAddressRanges))
    admin.allowedAddressRanges.forEach((entry, i) => {
      if (typeof entry !== 'string') return;
      const parsed = parseAddressRange(entry);
      if (typeof parsed === 'string')
        problems.push(invalid(`mcp.admin.allowedAddressRanges[${i}]`, `${parsed}`));
    });
  return problems;
}
