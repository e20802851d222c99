import type { StoredRegistration } from './registration-record';

/**
 * How long a deletion is remembered, in the store and by every replica, against a re-seed
 * that would bring the registration back (operations §15 "When Redis comes back empty").
 */
export const DELETION_MEMORY_MS = 10 * 60 * 1000;

/** How many deletions a replica (and the store) remembers at most: the newest are kept. */
export const DELETION_MEMORY_MAX = 1000;

/** A deleted registration: its id, the version of the record deleted, and when (ms). */
export interface Tombstone {
  readonly id: string;
  readonly version: number;
  readonly deletedAt: number;
}

/** What a re-seed writes back for one id: the record, or its deletion. */
export type SeedEntry =
  | { readonly kind: 'live'; readonly record: StoredRegistration }
  | { readonly kind: 'dead'; readonly tombstone: Tombstone };

/**
 * The merge rule of a re-seed, per id, whichever replica seeds first (the SEED script of
 * registration-store-scripts.ts applies the same rule against what the store holds): the
 * higher version wins; at the same version a deletion beats the live record, since the record
 * a deletion carries the version of is the one it deleted.
 */
export function supersedes(
  candidate: { readonly version: number; readonly deleted: boolean },
  current: { readonly version: number; readonly deleted: boolean },
): boolean {
  return (
    candidate.version > current.version ||
    (candidate.version === current.version && candidate.deleted && !current.deleted)
  );
}

const versionOf = (e: SeedEntry): { version: number; deleted: boolean } =>
  e.kind === 'live'
    ? { version: e.record.version, deleted: false }
    : { version: e.tombstone.version, deleted: true };

const idOf = (e: SeedEntry): string => (e.kind === 'live' ? e.record.upstream.id : e.tombstone.id);

/** One entry per id out of a replica's records and deletions: the one the merge rule keeps. */
export function seedEntries(
  records: readonly StoredRegistration[],
  tombstones: readonly Tombstone[],
): SeedEntry[] {
  const out = new Map<string, SeedEntry>();
  const entries: SeedEntry[] = [
    ...records.map((record) => ({ kind: 'live' as const, record })),
    ...tombstones.map((tombstone) => ({ kind: 'dead' as const, tombstone })),
  ];
  for (const entry of entries) {
    const current = out.get(idOf(entry));
    if (current === undefined || supersedes(versionOf(entry), versionOf(current)))
      out.set(idOf(entry), entry);
  }
  return [...out.values()];
}

/**
 * The deletions a replica made or read from the store, kept in its memory for
 * DELETION_MEMORY_MS (and at most DELETION_MEMORY_MAX of them): they outlive a store that
 * lost its data, so a re-seed by a replica that had not seen a deletion yet is undone by
 * this replica's re-seed (operations §15 "When Redis comes back empty").
 */
export class ReplicaTombstones {
  private readonly entries = new Map<string, Tombstone>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = DELETION_MEMORY_MS,
    private readonly max = DELETION_MEMORY_MAX,
  ) {}

  /** Remembers a deletion; of two for one id the one of the higher version stays. */
  note(tombstone: Tombstone): void {
    const current = this.entries.get(tombstone.id);
    if (current !== undefined && current.version > tombstone.version) return;
    if (current !== undefined && current.version === tombstone.version) {
      // the same deletion, told again (read back from the store): the first time stays
      if (current.deletedAt <= tombstone.deletedAt) return;
    }
    this.entries.set(tombstone.id, tombstone);
    // expired ones go in list(); a sync that learns many deletions prunes only past the bound
    if (this.entries.size > this.max) this.prune();
  }

  /**
   * The id is live in the store this replica read (re-registered, or kept by the merge of a
   * re-seed): that record is what counts now, also against a deletion of a higher version
   * made before the store was reset (a record written since gets a version from a counter
   * that restarted lower).
   */
  forget(id: string): void {
    this.entries.delete(id);
  }

  /** The deletions remembered, oldest first; expired ones are dropped. */
  list(): Tombstone[] {
    this.prune();
    return [...this.entries.values()].sort((a, b) => a.deletedAt - b.deletedAt);
  }

  private prune(): void {
    const oldest = this.now() - this.ttlMs;
    for (const [id, t] of this.entries) if (t.deletedAt < oldest) this.entries.delete(id);
    if (this.entries.size <= this.max) return;
    const byAge = [...this.entries.values()].sort((a, b) => a.deletedAt - b.deletedAt);
    for (const t of byAge.slice(0, this.entries.size - this.max)) this.entries.delete(t.id);
  }
}
