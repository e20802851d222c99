import { allowsSource, type CallerAccess } from '@app/identity';
import type { CatalogRefresh, CatalogSnapshot, RegistryService } from '@app/registry';
import {
  GatewayError,
  GatewayErrorCode,
  REGISTRY_UNAVAILABLE_MESSAGE,
} from '../errors/gateway-error';

/** What the handlers of the upstreams' methods (prompts, resources, completion, logging) share. */

export type Params = Readonly<Record<string, unknown>> | undefined;

export function catalogOf(registry: RegistryService): CatalogSnapshot {
  const catalog = registry.current();
  if (catalog === undefined)
    throw new GatewayError(GatewayErrorCode.RegistryUnavailable, REGISTRY_UNAVAILABLE_MESSAGE);
  return catalog;
}

/**
 * Whether the caller may use this upstream (docs/operations.md §13 "Access"); no access given: yes.
 */
export function granted(access: CallerAccess | undefined, upstreamId: string): boolean {
  return access === undefined || allowsSource(access, upstreamId);
}

/**
 * An entry of this replica's catalog that the caller may use, found with one refresh of the
 * sources on a miss (replicas' catalogs may briefly differ, and an upstream may have added it
 * since the last pull: contract §8, as for tools). An entry found outside the caller's grant is
 * undefined after the same wait (docs/operations.md §13 "Access"): the caller cannot tell it from
 * an entry that does not exist, by the answer or its time, and the refresh is the one a guessed
 * name gets (shared, at most one per `notFoundRefreshMinIntervalMillis`).
 */
export async function grantedEntry<T>(
  registry: RegistryService,
  refresh: CatalogRefresh,
  find: (catalog: CatalogSnapshot) => T | undefined,
  ownerOf: (entry: T) => string,
  access: CallerAccess | undefined,
): Promise<T | undefined> {
  let entry = find(catalogOf(registry));
  if (entry === undefined || !granted(access, ownerOf(entry))) {
    await refresh.refreshForUnknownTool();
    entry = find(catalogOf(registry));
  }
  return entry !== undefined && granted(access, ownerOf(entry)) ? entry : undefined;
}

export function noCursor(params: Params): void {
  if (params?.cursor !== undefined)
    throw new GatewayError(
      GatewayErrorCode.InvalidParams,
      'Invalid cursor: this server returns every entry in one page',
    );
}

export function stringParam(params: Params, name: string): string {
  const value = params?.[name];
  if (typeof value !== 'string' || value === '')
    throw new GatewayError(
      GatewayErrorCode.InvalidParams,
      `Invalid params: params.${name} must be a non-empty string`,
    );
  return value;
}
