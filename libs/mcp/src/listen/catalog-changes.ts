import type { CatalogSnapshot } from '@app/registry';

/**
 * A list of the published catalog that a client can be told has changed
 * (docs/operations.md §11 "Notification streams").
 */
export type ListKind = 'tools' | 'prompts' | 'resources';

/** The list_changed notification method of each list (MCP schema, both eras). */
export const LIST_CHANGED_METHOD: Readonly<Record<ListKind, string>> = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
};

/**
 * The lists whose published bytes differ between two catalogs, in the order tools, prompts,
 * resources (resource templates count as resources: `resources/list_changed` covers both).
 * Compared by the serialized lists every replica publishes identically (DESIGN
 * "Determinism"), so a swap that changed nothing a client can list (e.g. a tool's timeout)
 * yields no change. The first catalog (`previous` undefined) changes every non-empty list.
 */
export function changedLists(
  previous: CatalogSnapshot | undefined,
  next: CatalogSnapshot,
): ListKind[] {
  const changed: ListKind[] = [];
  const toolsBefore = previous?.toolsJsonBytes ?? EMPTY_LIST;
  if (!toolsBefore.equals(next.toolsJsonBytes)) changed.push('tools');
  const before = previous?.extras;
  if ((before?.promptsJson ?? '[]') !== next.extras.promptsJson) changed.push('prompts');
  if (
    (before?.resourcesJson ?? '[]') !== next.extras.resourcesJson ||
    (before?.resourceTemplatesJson ?? '[]') !== next.extras.resourceTemplatesJson
  )
    changed.push('resources');
  return changed;
}

const EMPTY_LIST = Buffer.from('[]');
