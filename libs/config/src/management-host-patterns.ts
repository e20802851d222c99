import { invalid, type ConfigProblem } from './config-problem';
import { addressKey, anyPortKey, parseHost, type AccessList } from './http-access-patterns';

/**
 * The entries of `mcp.management.allowedHosts`: `name` (any port: behind an ingress `Host`
 * carries no port, inside the cluster it carries MANAGEMENT_PORT), `name:port` or `name:*`;
 * IPv6 in brackets. No wildcard names: `*.example` would let in any name under it, which is
 * what DNS rebinding needs. A trailing dot (`gw.example.`) is the same DNS name and folded.
 * Compiled into the AccessList of http-access-patterns.ts: `exact` holds `host:port`,
 * `anyPort` the names allowed on every port.
 */

const SYNTAX =
  'must be a host name "name", "name:port" or "name:*"; no scheme, path or wildcard name';

/** `gw.example.` → `gw.example`: a fully qualified spelling of the same name. */
export function withoutTrailingDot(host: string): string {
  return host.length > 1 && host.endsWith('.') ? host.slice(0, -1) : host;
}

/** Whether an entry names a port (`name:…`, '[v6]:…'), as opposed to a bare name. */
function hasPort(text: string): boolean {
  return /^(\[[^\]]*\]|[^:]*):/.test(text);
}

/**
 * Validates and compiles `mcp.management.allowedHosts`. `problems` gets one line per bad
 * entry, named `mcp.management.allowedHosts[i]`; the returned list holds the good ones.
 */
export function compileManagementHosts(
  entries: readonly unknown[],
  problems: ConfigProblem[],
): AccessList {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  entries.forEach((entry, i) => {
    if (typeof entry !== 'string') return; // reported by the field checks
    const text = entry.trim();
    const parsed = parseHost(text, true);
    if (parsed === undefined) {
      const shown = JSON.stringify(entry.length > 80 ? `${entry.slice(0, 77)}...` : entry);
      problems.push(invalid(`mcp.management.allowedHosts[${i}]`, `${SYNTAX} (got ${shown})`));
      return;
    }
    const address = { ...parsed, host: withoutTrailingDot(parsed.host) };
    if (!hasPort(text) || address.port === '*') anyPort.add(anyPortKey(address));
    else exact.add(addressKey(address));
  });
  return { exact, anyPort };
}

/** The boot problems of `mcp.management` (a section of the wrong shape was reported already). */
export function managementProblems(management: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (typeof management !== 'object' || management === null) return problems;
  const { allowedHosts } = management as Record<string, unknown>;
  if (Array.isArray(allowedHosts)) compileManagementHosts(allowedHosts, problems);
  return problems;
}
