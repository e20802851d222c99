import type { CatalogSnapshot } from '@app/registry';

/**
 * The Tool fields of 2025-11-25 that 2026-07-28 does not have: `execution` (its `taskSupport`
 * says how a 2025 client may run the tool as a task; in 2026-07-28 tasks are an extension that
 * says it its own way). A 2026 client's tools/list leaves them out (docs/operations.md §11
 * "Tools for each revision").
 */
const LEGACY_ONLY_FIELD = 'execution';
const MARKER = `"${LEGACY_ONLY_FIELD}":`;

/** Per catalog, its `tools` array for 2026 clients; null when it is the same as for 2025. */
const modernLists = new WeakMap<CatalogSnapshot, string | null>();

/** A `tools` array's JSON without the fields 2026-07-28 does not have. */
export function withoutLegacyToolFields(toolsJson: string): string {
  if (!toolsJson.includes(MARKER)) return toolsJson;
  const tools = JSON.parse(toolsJson) as Record<string, unknown>[];
  for (const tool of tools) delete tool[LEGACY_ONLY_FIELD];
  return JSON.stringify(tools);
}

/**
 * The catalog's `tools` array for 2026 clients, built once per catalog; undefined when no tool
 * has a field 2026 lacks (the prebuilt bytes then serve both eras).
 */
export function modernToolsJson(catalog: CatalogSnapshot): string | undefined {
  let json = modernLists.get(catalog);
  if (json === undefined) {
    json = catalog.toolsJsonBytes.includes(MARKER)
      ? withoutLegacyToolFields(catalog.toolsJson)
      : null;
    modernLists.set(catalog, json);
  }
  return json ?? undefined;
}
