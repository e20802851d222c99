import type { PullErrorType } from '../manifest/manifest-errors';
import type { CatalogDiff } from './catalog-snapshot';

/** How many changes the history keeps (docs/console.md "Catalog history"); oldest go first. */
export const CATALOG_HISTORY_CAPACITY = 50;
/** How many tool names one entry lists per kind of change; the counts stay exact. */
export const HISTORY_NAMES_PER_KIND = 100;

/** A source's manifest revision before and after a publication (null: none). */
export interface RevisionChange {
  readonly from: string | null;
  readonly to: string | null;
}

/** A catalog was published: what it added, removed and changed, by published tool name. */
export interface CatalogPublishedEntry {
  readonly kind: 'published';
  /** Increases by one per entry; the newest entry has the largest. */
  readonly seq: number;
  /** ISO 8601 time of the publication. */
  readonly at: string;
  readonly toolCount: number;
  readonly counts: { readonly added: number; readonly removed: number; readonly changed: number };
  /** Names in code-unit order, at most HISTORY_NAMES_PER_KIND each (the counts are exact). */
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
  /** Bundle id → manifest revision before and after. */
  readonly revisions: Readonly<Record<string, RevisionChange>>;
}

/** A merge kept the previous catalog (contract §7.3, §7.6): the reason and the sources blamed. */
export interface CatalogRejectedEntry {
  readonly kind: 'rejected';
  readonly seq: number;
  /** ISO 8601 time of the first rejection of this kind in a row. */
  readonly at: string;
  /** ISO 8601 time of the latest one: the same rejection round after round is one entry. */
  readonly lastAt: string;
  /** How many rounds in a row were rejected for the same reason and sources (>= 1). */
  readonly repeats: number;
  /** An error type name such as ToolNameCollisionError. */
  readonly reason: PullErrorType;
  /** The gateway's own words (e.g. the colliding name and its sources); never a URL or a secret. */
  readonly detail: string;
  /** Ids of the sources whose copies took part in the rejected merge. */
  readonly sources: readonly string[];
}

export type CatalogHistoryEntry = CatalogPublishedEntry | CatalogRejectedEntry;

/** What GET /actuator/catalog/history returns: newest entry first. */
export interface CatalogHistoryView {
  readonly capacity: number;
  readonly entries: readonly CatalogHistoryEntry[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The last catalog changes of this replica, in memory and bounded
 * (docs/console.md "Catalog history"): every publication with its diff and revisions, every
 * rejection with its reason. A rejection that repeats round after round (same reason, detail and
 * sources, with no publication between) is one entry with a count, so a standing collision cannot
 * push every publication out of the history.
 */
export class CatalogHistory {
  private readonly entries: Array<CatalogPublishedEntry | Mutable<CatalogRejectedEntry>> = [];
  private seq = 0;

  constructor(private readonly capacity = CATALOG_HISTORY_CAPACITY) {}

  recordPublished(
    at: Date,
    toolCount: number,
    diff: CatalogDiff,
    revisions: Readonly<Record<string, RevisionChange>>,
  ): void {
    const names = (list: readonly string[]): string[] => list.slice(0, HISTORY_NAMES_PER_KIND);
    this.push({
      kind: 'published',
      seq: ++this.seq,
      at: at.toISOString(),
      toolCount,
      counts: {
        added: diff.added.length,
        removed: diff.removed.length,
        changed: diff.changed.length,
      },
      added: names(diff.added),
      removed: names(diff.removed),
      changed: names(diff.changed),
      revisions,
    });
  }

  recordRejected(
    at: Date,
    reason: PullErrorType,
    detail: string,
    sources: readonly string[],
  ): void {
    // A round may retry the merge and be rejected more than once: any rejection since the
    // last publication that repeats is counted, not added again.
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i];
      if (entry === undefined || entry.kind === 'published') break;
      if (
        entry.reason === reason &&
        entry.detail === detail &&
        entry.sources.join('\n') === sources.join('\n')
      ) {
        entry.repeats += 1;
        entry.lastAt = at.toISOString();
        return;
      }
    }
    this.push({
      kind: 'rejected',
      seq: ++this.seq,
      at: at.toISOString(),
      lastAt: at.toISOString(),
      repeats: 1,
      reason,
      detail,
      sources: [...sources],
    });
  }

  view(): CatalogHistoryView {
    return {
      capacity: this.capacity,
      entries: this.entries
        .map((e): CatalogHistoryEntry => (e.kind === 'rejected' ? { ...e } : e))
        .reverse(),
    };
  }

  private push(entry: CatalogPublishedEntry | Mutable<CatalogRejectedEntry>): void {
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.shift();
  }
}
