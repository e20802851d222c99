import type { CallerAccess } from '@app/identity';
import type { CatalogSnapshot } from '@app/registry';
import { callerListJson } from '../servers/caller-lists';
import type { ListKind } from './catalog-changes';

const EMPTY = '[]';

/**
 * Of the lists that changed in the published catalog (`changed`, from changedLists), those
 * that changed for this caller: a restricted caller (`mcp.access`) is told only when what it
 * may list changed, so a source outside its grant neither signals its activity nor wakes it up
 * (docs/security.md "Listen filters and list changes"). Everything for a caller without
 * restrictions. The filtered lists are the ones tools/list and friends serve (callerListJson,
 * built once per catalog and grant key). `access` is the grant as it stood for `previous`,
 * `nextAccess` as it stands for `next` (a grant narrowed to a virtual server's view is resolved
 * per catalog).
 */
export function changedListsFor(
  changed: readonly ListKind[],
  previous: CatalogSnapshot | undefined,
  next: CatalogSnapshot,
  access: CallerAccess | undefined,
  nextAccess: CallerAccess | undefined = access,
): readonly ListKind[] {
  if (access === undefined || access.all || changed.length === 0) return changed;
  if (nextAccess === undefined || nextAccess.all) return changed;
  const before = (list: Parameters<typeof callerListJson>[1]): string =>
    previous === undefined ? EMPTY : callerListJson(previous, list, access);
  const differs = (list: Parameters<typeof callerListJson>[1]): boolean =>
    before(list) !== callerListJson(next, list, nextAccess);
  return changed.filter((kind) => {
    switch (kind) {
      case 'tools':
        return differs('tools');
      case 'prompts':
        return differs('prompts');
      case 'resources':
        return differs('resources') || differs('resourceTemplates');
    }
  });
}
