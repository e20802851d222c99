import type { BundleDefinition } from '@app/config';
import type { PublishedTool } from '../manifest/manifest.types';

/** Where a call for a catalog tool goes. Only configuration supplies it (contract §1). */
export interface BundleRoute {
  readonly kind: 'bundle';
  readonly bundle: BundleDefinition;
}

export type ToolRoute = BundleRoute;

/** One callable, listed tool of a published catalog. */
export interface CatalogTool {
  /** The published name: the tools/call key and, for bundles, the path of the call (contract §10). */
  readonly name: string;
  readonly sourceId: string;
  readonly route: ToolRoute;
  /** Effective timeout in ms: `_meta.timeoutMillis` capped by maxToolTimeoutMillis, which is also the default (§7.5). */
  readonly timeoutMillis: number;
  readonly version: string;
  readonly published: PublishedTool;
}
