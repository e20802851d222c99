import { allowsSource, allowsTool, type CallerAccess } from '@app/identity';
import type { CatalogSnapshot } from '@app/registry';
import { declaresExtension, Extension, isAppOnlyTool } from '@app/wire';
import { bundleTaskSupport } from '../tasks/bundle-task-support';
import { keptFor } from './caller-lists';

/**
 * Extensions between the agents and the sources (docs/operations.md §10 "Extensions"): which
 * tools an agent is given for what it declared, and which extensions the gateway declares to it
 * for what its sources declared.
 */

/** Per catalog: the published names of its tools that only an MCP App's view may call. */
const appOnlyNames = new WeakMap<CatalogSnapshot, ReadonlySet<string>>();

/** The catalog's app-only tools (`_meta.ui.visibility` without "model"), found once per catalog. */
export function appOnlyToolNames(catalog: CatalogSnapshot): ReadonlySet<string> {
  let names = appOnlyNames.get(catalog);
  if (names === undefined) {
    names = appOnlyNamesAmong(catalog.tools);
    appOnlyNames.set(catalog, names);
  }
  return names;
}

/**
 * Whether a request's client is kept from app-only tools: it stated its capabilities and they
 * do not declare the MCP Apps extension (such a client has no view to call them from). A client
 * whose capabilities are not known (a stateless 2025 gateway has no session to keep them in) is
 * not filtered.
 */
export function keepsFromAppTools(clientCapabilities: unknown): boolean {
  return clientCapabilities !== undefined && !declaresExtension(clientCapabilities, Extension.ui);
}

/** Whether a tool's listed JSON says it is app-only (parsed only when it names a visibility). */
function isAppOnlyJson(publishedJson: string): boolean {
  return publishedJson.includes('"visibility"') && isAppOnlyTool(JSON.parse(publishedJson));
}

/** The names of the app-only tools among `tools` (a live upstream's list, say). */
export function appOnlyNamesAmong(
  tools: Iterable<{ readonly name: string; readonly publishedJson: string }>,
): Set<string> {
  const names = new Set<string>();
  for (const tool of tools) if (isAppOnlyJson(tool.publishedJson)) names.add(tool.name);
  return names;
}

/**
 * Whether `tool` is an app-only tool this client is kept from: a catalog tool by the catalog's
 * set (no second lookup of the tool), a `lists: live` upstream's tool (`catalog` undefined: it is
 * in no catalog) by its own listed JSON.
 */
export function isHiddenAppTool(
  catalog: CatalogSnapshot | undefined,
  tool: { readonly name: string; readonly publishedJson: string },
  clientCapabilities: unknown,
): boolean {
  if (!keepsFromAppTools(clientCapabilities)) return false;
  return catalog !== undefined
    ? appOnlyToolNames(catalog).has(tool.name)
    : isAppOnlyJson(tool.publishedJson);
}

const withoutAppTools = new WeakMap<CatalogSnapshot, Map<string, string>>();

/**
 * The `tools` array's JSON without the app-only tools, for the caller's grants (all when
 * `access` is undefined or grants all), built once per catalog and grant key from the published
 * entries, in the published order.
 */
export function toolsJsonWithoutAppTools(
  catalog: CatalogSnapshot,
  access: CallerAccess | undefined,
): string {
  const restricted = access !== undefined && !access.all ? access : undefined;
  // a grant narrowed to a view of another catalog: built, not kept (caller-lists.ts keptFor)
  if (restricted !== undefined && !keptFor(catalog, restricted))
    return appToolsLeftOut(catalog, restricted);
  let byKey = withoutAppTools.get(catalog);
  if (byKey === undefined) {
    byKey = new Map();
    withoutAppTools.set(catalog, byKey);
  }
  const key = restricted?.key ?? '';
  let json = byKey.get(key);
  if (json === undefined) {
    json = appToolsLeftOut(catalog, restricted);
    byKey.set(key, json);
  }
  return json;
}

/** The JSON array of the catalog's tools the caller may see, app-only tools left out. */
function appToolsLeftOut(
  catalog: CatalogSnapshot,
  restricted: Extract<CallerAccess, { all: false }> | undefined,
): string {
  const hidden = appOnlyToolNames(catalog);
  const kept: string[] = [];
  for (const tool of catalog.tools)
    if (
      !hidden.has(tool.name) &&
      (restricted === undefined || allowsTool(restricted, tool.sourceId, tool.name))
    )
      kept.push(tool.publishedJson);
  return `[${kept.join(',')}]`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const mergedByCatalog = new WeakMap<CatalogSnapshot, Map<string, Record<string, object> | null>>();

/**
 * The `extensions` the gateway declares to a caller: those its upstreams declared, from the
 * sources in the caller's grant, merged by identifier; where two upstreams declare one
 * extension with different settings, the first in configuration order is declared. undefined
 * when none.
 */
export function mergedExtensions(
  catalog: CatalogSnapshot,
  access: CallerAccess | undefined,
  modern = false,
): Record<string, object> | undefined {
  const restricted = access !== undefined && !access.all ? access : undefined;
  // a grant narrowed to a view of another catalog: built, not kept (caller-lists.ts keptFor)
  if (restricted !== undefined && !keptFor(catalog, restricted))
    return extensionsOf(catalog, restricted, modern) ?? undefined;
  let byKey = mergedByCatalog.get(catalog);
  if (byKey === undefined) {
    byKey = new Map();
    mergedByCatalog.set(catalog, byKey);
  }
  const key = `${modern ? 'm' : 'l'}${restricted?.key ?? ''}`;
  let merged = byKey.get(key);
  if (merged === undefined) {
    merged = extensionsOf(catalog, restricted, modern);
    byKey.set(key, merged);
  }
  return merged ?? undefined;
}

/**
 * What the gateway declares of upstreams' extensions (docs/operations.md §10 "Extensions"): at
 * most this many identifiers from one upstream and in all, each at most MAX_EXTENSION_ID_CHARS
 * long with settings of at most MAX_EXTENSION_SETTINGS_CHARS of JSON; the rest is left out, so
 * one upstream cannot make every client's initialize and server/discover megabytes long.
 */
const MAX_EXTENSIONS_PER_UPSTREAM = 16;
const MAX_EXTENSIONS = 64;
const MAX_EXTENSION_ID_CHARS = 128;
const MAX_EXTENSION_SETTINGS_CHARS = 4096;

/** The extensions of the caller's granted sources, merged; null when none. */
function extensionsOf(
  catalog: CatalogSnapshot,
  restricted: Extract<CallerAccess, { all: false }> | undefined,
  modern: boolean,
): Record<string, object> | null {
  // a Map: the identifiers are the upstreams' (`__proto__` is one like any other)
  const found = new Map<string, object>();
  for (const { upstream, capabilities } of catalog.extras.upstreams.values()) {
    if (restricted !== undefined && !allowsSource(restricted, upstream.id)) continue;
    if (!isRecord(capabilities.extensions)) continue;
    let taken = 0;
    for (const [id, settings] of Object.entries(capabilities.extensions)) {
      if (taken >= MAX_EXTENSIONS_PER_UPSTREAM || found.size >= MAX_EXTENSIONS) break;
      if (found.has(id) || !isRecord(settings) || id.length > MAX_EXTENSION_ID_CHARS) continue;
      if (JSON.stringify(settings).length > MAX_EXTENSION_SETTINGS_CHARS) continue;
      found.set(id, settings);
      taken++;
    }
  }
  // Tasks (docs/operations.md §10 "Tasks") are a 2026-07-28 extension: never offered to a 2025
  // client (no tasks/* there); offered to a 2026 one by the gateway itself when it may call a
  // bundle tool that can run as a task
  if (!modern) found.delete(Extension.tasks);
  else if (
    !found.has(Extension.tasks) &&
    catalog.tools.some(
      (t) =>
        bundleTaskSupport(t) !== undefined &&
        (restricted === undefined || allowsTool(restricted, t.sourceId, t.name)),
    )
  )
    found.set(Extension.tasks, {});
  return found.size === 0 ? null : Object.fromEntries(found);
}
