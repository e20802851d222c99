import { allowsSource, type CallerAccess } from '@app/identity';
import type { PartialSource } from '@app/registry';

/**
 * The `_meta` key of a list result that names the sources served incompletely (issue 10 §9):
 * `[{id, kind: "bundle"|"upstream", state: "last-good"|"missing"}]`. A list whose every
 * source is served from its latest pull carries no `_meta` at all, so its bytes stay what
 * they were before upstreams existed (clients comparing results whole keep working); its
 * absence means "complete". The prefix is this project's own (reverse DNS, not a reserved
 * `modelcontextprotocol`/`mcp` one; wire notes G-8). docs/operations.md §10.
 */
export const PARTIAL_SOURCES_META_KEY = 'io.github.mcp-gateway/partialSources';

/**
 * `,"_meta":{…}` to close a list result with, as JSON text; "" when no source is partial. A
 * restricted caller (issue 12 §3) hears only of the sources granted to it whole: the ids of
 * the others are not its business.
 */
export function partialSourcesMember(all: readonly PartialSource[], access?: CallerAccess): string {
  const partial =
    access === undefined || access.all ? all : all.filter((p) => allowsSource(access, p.id));
  return partial.length === 0
    ? ''
    : `,"_meta":${JSON.stringify({ [PARTIAL_SOURCES_META_KEY]: partial })}`;
}
