import type { CatalogSnapshot, CatalogTool } from '@app/registry';

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
/** Per catalog, its `tools` array for 2025 clients; null when it is the catalog's own. */
const legacyLists = new WeakMap<CatalogSnapshot, string | null>();

/**
 * A published `outputSchema` whose root may not be `type: "object"`: its first member (after a
 * `$schema`) is not `"type":"object"`. A pre-check only (a false positive is parsed and found
 * an object); an object root written with `type` first, as schema generators do, costs nothing.
 */
const MAYBE_NON_OBJECT_OUTPUT =
  /"outputSchema":\{(?:"\$schema":"[^"\\]*",)?(?!"type":"object"[,}])/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `$ref`s inside `schema` pointing into it (`#…`) rewritten to point under `/properties/result`. */
function movedRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(movedRefs);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#')
        ? `#/properties/result${value.slice(1)}`
        : movedRefs(value);
  return out;
}

/**
 * A 2026 tool's `outputSchema` as a 2025 client may be given it (wire notes §2.4, G-26): that
 * revision's root is `type: "object"`, so any other is wrapped as the property `result`
 * (required; `$ref`s into it moved with it; `$schema` kept at the root), as the official v2
 * server does for its 2025 clients. The call's `structuredContent` is wrapped alike
 * (`legacyStructuredResult`, libs/mcp/src/relay/legacy-result.ts).
 */
export function legacyOutputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.type === 'object') return schema;
  const { $schema, ...inner } = schema;
  return {
    ...($schema === undefined ? {} : { $schema }),
    type: 'object',
    properties: { result: movedRefs(inner) },
    required: ['result'],
  };
}

/** Per tool, whether its outputSchema is wrapped for 2025 clients (outputWrappedForLegacy). */
const wrappedOutputs = new WeakMap<CatalogTool, boolean>();

/**
 * Whether the tool's `outputSchema` is listed to 2025 clients wrapped (legacyOutputSchema: its
 * root is not `type: "object"`), so that its call's `structuredContent` is wrapped alike
 * (legacyStructuredResult). Read from its listed JSON once per tool.
 */
export function outputWrappedForLegacy(tool: CatalogTool): boolean {
  let wrapped = wrappedOutputs.get(tool);
  if (wrapped === undefined) {
    const json = tool.publishedJson;
    wrapped = false;
    if (json.includes('"outputSchema"') && MAYBE_NON_OBJECT_OUTPUT.test(json)) {
      const schema = (JSON.parse(json) as Record<string, unknown>).outputSchema;
      wrapped = isRecord(schema) && schema.type !== 'object';
    }
    wrappedOutputs.set(tool, wrapped);
  }
  return wrapped;
}

/** A `tools` array's JSON for 2025 clients: non-object output schemas wrapped (legacyOutputSchema). */
export function withLegacyOutputSchemas(toolsJson: string): string {
  if (!MAYBE_NON_OBJECT_OUTPUT.test(toolsJson)) return toolsJson;
  const tools = JSON.parse(toolsJson) as Record<string, unknown>[];
  let changed = false;
  for (const tool of tools) {
    const schema = tool.outputSchema;
    if (!isRecord(schema) || schema.type === 'object') continue;
    tool.outputSchema = legacyOutputSchema(schema);
    changed = true;
  }
  return changed ? JSON.stringify(tools) : toolsJson;
}

/** A `tools` array's JSON for the revision served: 2026 without 2025-only fields, 2025 with object output schemas. */
export function toolsJsonFor(modern: boolean, toolsJson: string): string {
  return modern ? withoutLegacyToolFields(toolsJson) : withLegacyOutputSchemas(toolsJson);
}

/**
 * The catalog's `tools` array for 2025 clients, built once per catalog; undefined when no tool
 * has an output schema to wrap (the prebuilt bytes then serve them).
 */
export function legacyToolsJson(catalog: CatalogSnapshot): string | undefined {
  let json = legacyLists.get(catalog);
  if (json === undefined) {
    const wrapped = withLegacyOutputSchemas(catalog.toolsJson);
    json = wrapped === catalog.toolsJson ? null : wrapped;
    legacyLists.set(catalog, json);
  }
  return json ?? undefined;
}

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
