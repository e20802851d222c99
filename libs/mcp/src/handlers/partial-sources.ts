import type { PartialSource } from '@app/registry';

/**
 * The `_meta` key of every list result that names the sources served incompletely (issue 10
 * §9): `[{id, kind: "bundle"|"upstream", state: "last-good"|"missing"}]`, empty when every
 * source is served from a fresh pull. The prefix is this project's own (reverse DNS, not a
 * reserved `modelcontextprotocol`/`mcp` one; wire notes G-8). docs/operations.md.
 */
export const PARTIAL_SOURCES_META_KEY = 'io.github.mcp-gateway/partialSources';

/** `,"_meta":{…}` to close a list result with, as JSON text. */
export function partialSourcesMember(partial: readonly PartialSource[]): string {
  return `,"_meta":${JSON.stringify({ [PARTIAL_SOURCES_META_KEY]: partial })}`;
}
