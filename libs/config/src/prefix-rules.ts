import { GATEWAY_TOOL_PREFIX } from '@app/wire';
import type { ConfigProblem } from './config-problem';
import { isObject } from './config-rules';
import type { BundleConfig, McpConfig } from './mcp-config.model';
import type { UpstreamConfig } from './upstream-config.model';
import { upstreamNamePrefix } from './upstream-rules';

/** A source's published-name prefix and where it is configured. */
interface PrefixedSource {
  /** `mcp.bundles[i]` or `mcp.upstreams[i]`. */
  readonly at: string;
  readonly prefix: string;
  readonly bundle: boolean;
}

/** Every source with a prefix to compare, bundles first, each list in config order. */
function prefixedSources(mcp: McpConfig): PrefixedSource[] {
  const sources: PrefixedSource[] = [];
  const bundles: unknown[] = Array.isArray(mcp.bundles) ? mcp.bundles : [];
  bundles.forEach((raw, i) => {
    const bundle = raw as BundleConfig;
    if (isObject(bundle) && typeof bundle.namePrefix === 'string')
      sources.push({ at: `mcp.bundles[${i}]`, prefix: bundle.namePrefix, bundle: true });
  });
  const upstreams: unknown[] = Array.isArray(mcp.upstreams) ? mcp.upstreams : [];
  upstreams.forEach((raw, i) => {
    const upstream = raw as UpstreamConfig;
    if (
      !isObject(upstream) ||
      typeof upstream.id !== 'string' ||
      (upstream.namePrefix !== undefined && typeof upstream.namePrefix !== 'string')
    )
      return;
    // "" is the sole-source rule's (upstreamProblems), not an overlap with everything
    const prefix = upstreamNamePrefix(upstream);
    if (prefix !== '') sources.push({ at: `mcp.upstreams[${i}]`, prefix, bundle: false });
  });
  return sources;
}

/**
 * The one prefix rule over every source, bundles and upstreams alike (contract §3, and
 * docs/operations.md §10 "Configuration"): no published-name prefix is another's, starts with
 * another's, or overlaps the prefix of the gateway's own tools. A clash is reported on the later
 * source of a duplicate and on the longer prefix of an overlap, naming the other one (`other`).
 * Between two bundles the lines cite the contract, as its own rule.
 */
export function prefixProblems(mcp: McpConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const sources = prefixedSources(mcp);
  // The gateway's own tools keep their names (docs/operations.md §16 "Tool search"), and no
  // source publishes look-alikes of them: the reserved prefix is compared in any letter case
  // (`GATEWAY__call_tool` is a distinct name to a client, not to the person reading it).
  for (const { at, prefix } of sources) {
    const folded = prefix.toLowerCase();
    if (folded.startsWith(GATEWAY_TOOL_PREFIX) || GATEWAY_TOOL_PREFIX.startsWith(folded))
      problems.push({
        path: `${at}.namePrefix`,
        code: 'reserved-prefix',
        message: `"${prefix}" overlaps "${GATEWAY_TOOL_PREFIX}" (in any letter case), the prefix reserved for the gateway's own tools`,
      });
  }
  sources.forEach((a, x) => {
    for (const b of sources.slice(x + 1)) {
      const bundles = a.bundle && b.bundle;
      if (a.prefix === b.prefix) {
        problems.push({
          path: `${b.at}.namePrefix`,
          code: 'duplicate-prefix',
          other: a.at,
          message: bundles
            ? `"${b.prefix}" duplicates ${a.at}.namePrefix (contract §3)`
            : `"${b.prefix}" duplicates ${a.at}.namePrefix (prefixes are unique across bundles and upstreams)`,
        });
      } else if (b.prefix.startsWith(a.prefix) || a.prefix.startsWith(b.prefix)) {
        const [short, long] = b.prefix.startsWith(a.prefix) ? [a, b] : [b, a];
        problems.push({
          path: `${long.at}.namePrefix`,
          code: 'overlapping-prefix',
          other: short.at,
          message: bundles
            ? `"${long.prefix}" starts with ${short.at}.namePrefix "${short.prefix}", so a tool name could belong to both (contract §3)`
            : `"${long.prefix}" starts with ${short.at}.namePrefix "${short.prefix}", so a published name could belong to both`,
        });
      }
    }
  });
  return problems;
}
