import { invalid, type ConfigProblem } from './config-problem';
import { shownUrl } from './shown-url';

/**
 * The entries of `mcp.http.allowedOrigins` and `mcp.http.allowedHosts` (docs/operations.md §8; MCP
 * Streamable HTTP "Security Warning": servers MUST validate Origin and answer 403 to an
 * invalid one, DNS rebinding). Parsed once at boot; the /mcp listener only compares strings.
 *
 * Origins: `scheme://host[:port]` or `scheme://host:*` (any port), or the literal `null`
 * (what sandboxed frames and `file:` pages send). Compared by scheme, host and port: the host
 * lowercased, a default port folded (`http://a` = `http://a:80`, `https://a` = `https://a:443`).
 * Hosts: `host[:port]` or `host:*` (any port); a bare `host` is the default port 80, which a
 * `Host` header without a port means. No wildcard host names (a `*.example` would let any
 * subdomain in, which is what DNS rebinding needs).
 */

/** `scheme://host:port`, `scheme://host:*` or `null`: the form matchers compare. */
export type OriginKey = string;
/** `host:port` or `host:*`: the form matchers compare. */
export type HostKey = string;

/** A parsed allow-list: exact keys, and the `…:*` keys of entries that allow any port. */
export interface AccessList {
  /** Exact `scheme://host:port` (origins) or `host:port` (hosts); `null` for the null origin. */
  readonly exact: ReadonlySet<string>;
  /** `scheme://host` (origins) or `host` (hosts) whose every port is allowed. */
  readonly anyPort: ReadonlySet<string>;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

/** scheme://host[:port][/] ; host is a name, an IPv4 address or a bracketed IPv6 address. */
const ORIGIN_RE =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(\[[0-9A-Fa-f:.]+\]|[^/:?#@[\]\s]+)(?::(\d{1,5}|\*))?\/?$/;
/** host[:port] as a Host header or a host entry carries it. */
const HOST_RE = /^(\[[0-9A-Fa-f:.]+\]|[^/:?#@[\]\s]+)(?::(\d{1,5}|\*))?$/;
/**
 * What a host name may hold after lowercasing (RFC 3986 reg-name without percent-encoding), in
 * labels that are not empty (`.localhost` or `a..b` names no host; one trailing dot is the fully
 * qualified spelling of a name).
 */
const HOST_NAME_RE = /^(\[[0-9a-f:.]+\]|[a-z0-9_~!$&'()+,;=-]+(\.[a-z0-9_~!$&'()+,;=-]+)*\.?)$/;

/** One parsed origin or host: the port is a number, or '*' for any port (entries only). */
export interface ParsedAddress {
  /** Lowercase scheme; '' for a host entry. */
  readonly scheme: string;
  /** Lowercase host; IPv6 keeps its brackets. */
  readonly host: string;
  readonly port: number | '*';
}

function portOf(text: string | undefined, scheme: string): number | '*' | undefined {
  if (text === '*') return '*';
  if (text === undefined || text === '') return DEFAULT_PORTS[scheme] ?? undefined;
  const port = Number(text);
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * Parses `scheme://host[:port]`; `allowAnyPort` admits `:*` (config entries, never a request's
 * Origin). undefined when the text is not such an origin. A scheme without a default port
 * (anything but http and https) needs an explicit port or `*`.
 */
export function parseOrigin(text: string, allowAnyPort: boolean): ParsedAddress | undefined {
  const match = ORIGIN_RE.exec(text);
  if (match === null) return undefined;
  const scheme = (match[1] ?? '').toLowerCase();
  const host = (match[2] ?? '').toLowerCase();
  if (!HOST_NAME_RE.test(host)) return undefined;
  const port = portOf(match[3], scheme);
  if (port === undefined || (port === '*' && !allowAnyPort)) return undefined;
  return { scheme, host, port };
}

/** Parses `host[:port]` (a Host header, or an entry with `allowAnyPort`); no port means 80. */
export function parseHost(text: string, allowAnyPort: boolean): ParsedAddress | undefined {
  const match = HOST_RE.exec(text);
  if (match === null) return undefined;
  const host = (match[1] ?? '').toLowerCase();
  if (!HOST_NAME_RE.test(host)) return undefined;
  const port = portOf(match[2], 'http');
  if (port === undefined || (port === '*' && !allowAnyPort)) return undefined;
  return { scheme: '', host, port };
}

/** `scheme://host:port` (or `host:port` when scheme is ''): the key an address compares by. */
export function addressKey(address: ParsedAddress): string {
  const hostPort = `${address.host}:${address.port}`;
  return address.scheme === '' ? hostPort : `${address.scheme}://${hostPort}`;
}

/** `scheme://host` (or `host`): the key an any-port entry compares by. */
export function anyPortKey(address: ParsedAddress): string {
  return address.scheme === '' ? address.host : `${address.scheme}://${address.host}`;
}

const ORIGIN_SYNTAX =
  'must be an origin "scheme://host[:port]" or "scheme://host:*" (any port), or "null"; ' +
  'no path, query, user info or wildcard host';
const HOST_SYNTAX =
  'must be "host[:port]" or "host:*" (any port); no scheme, path or wildcard host';

/**
 * Validates and compiles allow-list entries. `problems` gets one line per malformed entry,
 * named `<at>[i]`; the returned list holds the good ones.
 */
export function compileAccessList(
  entries: readonly unknown[],
  kind: 'origin' | 'host',
  at: string,
  problems: ConfigProblem[],
): AccessList {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  entries.forEach((entry, i) => {
    if (typeof entry !== 'string') return; // reported by the field checks
    const text = entry.trim();
    if (kind === 'origin' && text === 'null') {
      exact.add('null');
      return;
    }
    const parsed = kind === 'origin' ? parseOrigin(text, true) : parseHost(text, true);
    if (parsed === undefined) {
      // an origin that is not one may be a whole URL: its query or userinfo is never quoted
      const shown =
        kind === 'origin'
          ? shownUrl(entry)
          : JSON.stringify(entry.length > 80 ? `${entry.slice(0, 77)}...` : entry);
      problems.push(
        invalid(`${at}[${i}]`, `${kind === 'origin' ? ORIGIN_SYNTAX : HOST_SYNTAX} (got ${shown})`),
      );
      return;
    }
    if (parsed.port === '*') anyPort.add(anyPortKey(parsed));
    else exact.add(addressKey(parsed));
  });
  return { exact, anyPort };
}

/** Whether a parsed request address is on the list. */
export function listAllows(list: AccessList, address: ParsedAddress): boolean {
  return list.anyPort.has(anyPortKey(address)) || list.exact.has(addressKey(address));
}

/** The problems of `mcp.http` entries (a section of the wrong shape was reported already). */
export function httpAccessProblems(http: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (typeof http !== 'object' || http === null) return problems;
  const { allowedOrigins, allowedHosts } = http as Record<string, unknown>;
  if (Array.isArray(allowedOrigins)) {
    compileAccessList(allowedOrigins, 'origin', 'mcp.http.allowedOrigins', problems);
  }
  if (Array.isArray(allowedHosts)) {
    compileAccessList(allowedHosts, 'host', 'mcp.http.allowedHosts', problems);
  }
  return problems;
}
