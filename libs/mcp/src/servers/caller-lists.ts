import { allowsSource, allowsTool, type CallerAccess } from '@app/identity';
import type { CatalogSnapshot } from '@app/registry';

type Restricted = Extract<CallerAccess, { all: false }>;
type ListName = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/**
 * Lists filtered for one set of grants (docs/operations.md §13 "Access"), serialized once per
 * catalog snapshot and grant key: callers with the same matching rules share the text, and a new
 * catalog starts afresh (the WeakMap lets old snapshots go). The JSON is the published entries, in
 * the published order, joined.
 */
const built = new WeakMap<CatalogSnapshot, Map<string, string>>();

function join(entries: Iterable<string>): string {
  let text = '';
  for (const entry of entries) text = text === '' ? entry : `${text},${entry}`;
  return `[${text}]`;
}

function* visible(catalog: CatalogSnapshot, list: ListName, access: Restricted): Iterable<string> {
  const listed = catalog.extras.listed();
  switch (list) {
    case 'tools':
      for (const t of catalog.tools)
        if (allowsTool(access, t.sourceId, t.name)) yield t.publishedJson;
      return;
    case 'prompts':
      for (const p of listed.prompts) if (allowsSource(access, p.sourceId)) yield p.publishedJson;
      return;
    case 'resources':
      for (const r of listed.resources) if (allowsSource(access, r.sourceId)) yield r.publishedJson;
      return;
    case 'resourceTemplates':
      for (const t of listed.resourceTemplates)
        if (allowsSource(access, t.upstream.id)) yield t.publishedJson;
      return;
  }
}

/**
 * Whether what is built for `access` from `catalog` may be kept under the grant's key for that
 * catalog: not for a grant narrowed to a virtual server's view of another catalog (its key
 * names the view of that one; VirtualServers.narrowFor resolves it again).
 */
export function keptFor(catalog: object, access: { readonly resolvedFor?: object }): boolean {
  return access.resolvedFor === undefined || access.resolvedFor === catalog;
}

/** The JSON array of `list` that this caller may see. */
export function callerListJson(
  catalog: CatalogSnapshot,
  list: ListName,
  access: Restricted,
): string {
  // a grant narrowed to a view for another catalog lists what that catalog's view held: built,
  // not kept under its key for this one (VirtualServers.narrowFor resolves it again)
  if (!keptFor(catalog, access)) return join(visible(catalog, list, access));
  let byKey = built.get(catalog);
  if (byKey === undefined) {
    byKey = new Map();
    built.set(catalog, byKey);
  }
  const key = `${list}|${access.key}`;
  let json = byKey.get(key);
  if (json === undefined) {
    json = join(visible(catalog, list, access));
    byKey.set(key, json);
  }
  return json;
}
