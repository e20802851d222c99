import type { UpstreamDefinition } from '@app/config';
import type { CallerAccess } from '@app/identity';
import type { CatalogRefresh, RegistryService } from '@app/registry';
import { grantedEntry } from './upstream-handler-support';

/**
 * The owner of a resource URI that the caller may use (docs/operations.md §10 "Routing"), the
 * one lookup of every method routed by URI (resources/read, resources/subscribe,
 * resources/unsubscribe, a `ref/resource` completion): a URI this replica's catalog lacks gets
 * one refresh before it is answered unknown, as an upstream may have added it without
 * `list_changed`; undefined when none owns it or its owner is outside the grant.
 */
export function grantedResourceOwner(
  registry: RegistryService,
  refresh: CatalogRefresh,
  uri: string,
  access: CallerAccess | undefined,
): Promise<UpstreamDefinition | undefined> {
  return grantedEntry(
    registry,
    refresh,
    (catalog) => catalog.extras.resourceOwner(uri),
    (owner) => owner.id,
    access,
  );
}
