import { allowsSource, type CallerAccess } from '@app/identity';
import type { PartialSource } from '@app/registry';

/**
 * The `_meta` key of a list result that names the sources served incompletely
 * (docs/operations.md §10 "Partial lists"): `[{id, kind: "bundle"|"upstream", state:
 * "last-good"|"missing"}]`. A list whose every source is served from its latest pull carries no
 * `_meta` at all, so its bytes stay what they were before upstreams existed (clients comparing
 * results whole keep working); its absence means "complete". The prefix is this project's own
 * (reverse DNS, not a reserved `modelcontextprotocol`/`mcp` one; wire notes G-8).
 */
export const PARTIAL_SOURCES_META_KEY = 'io.github.mcp-gateway/partialSources';

/**
 * `,"_meta":{…}` to close a list result with, as JSON text; "" when no source is partial. A
 * restricted caller (docs/operations.md §13 "Access") hears only of the sources granted to it whole
 * and, in a tools list (`prefixOf` given: a source id → its namePrefix), of the sources of the
 * single tools granted to it (a tool it may use is missing); the ids of the others are not its
 * business.
 */
export function partialSourcesMember(
  all: readonly PartialSource[],
  access?: CallerAccess,
  prefixOf?: (sourceId: string) => string | undefined,
): string {
  const partial =
    access === undefined || access.all
      ? all
      : all.filter((p) => hearsOfSource(access, p.id, prefixOf));
  return partial.length === 0
    ? ''
    : `,"_meta":${JSON.stringify({ [PARTIAL_SOURCES_META_KEY]: partial })}`;
}

/**
 * Whether a restricted caller may be told that a source is served incompletely: the source is
 * granted to it whole, or (`prefixOf` given) one of its single-tool grants is a name the
 * source publishes.
 */
export function hearsOfSource(
  access: CallerAccess,
  sourceId: string,
  prefixOf?: (sourceId: string) => string | undefined,
): boolean {
  if (access.all || allowsSource(access, sourceId)) return true;
  const prefix = prefixOf?.(sourceId);
  if (prefix === undefined) return false;
  for (const name of access.tools) if (name.startsWith(prefix)) return true;
  return false;
}
