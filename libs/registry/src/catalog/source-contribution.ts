import type { SourceKind } from '../source-intake';
import type { TimeSlicer } from '../time-slicer';
import type { UpstreamContribution } from '../upstream/upstream-contribution';
import type { CatalogTool } from './catalog-tool';

/** The limits the merge applies to every contribution (contract §7.3, §7.5). */
export interface MergeLimits {
  readonly maxToolsTotal: number;
  readonly maxToolTimeoutMillis: number;
}

/**
 * What one source gives the catalog, whatever its kind (docs/architecture.md "Sources as
 * intakes"): each intake hands the registry its sources' contributions, and the merge
 * (mergeCatalog) takes them all in this one shape. A new kind of source contributes this way too.
 */
export interface SourceContribution {
  readonly kind: SourceKind;
  readonly id: string;
  /** Equal fingerprints: equal contributions (the catalog is not rebuilt from equal ones). */
  readonly fingerprint: string;
  /** A bundle manifest's revision (null: it names none); undefined for a kind without revisions. */
  readonly revision?: string | null;
  /** An upstream's prompts, resources and templates beside its tools (CatalogExtras). */
  readonly upstream?: UpstreamContribution;
  /**
   * Its listed tools as catalog entries, sorted by name. Built only when a catalog is merged,
   * not when an unchanged one is kept: a 10,000-tool bundle is not converted every round.
   */
  entries(limits: MergeLimits, slicer: TimeSlicer): Promise<readonly CatalogTool[]>;
}
