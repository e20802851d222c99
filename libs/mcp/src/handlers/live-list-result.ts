import { PreSerialized } from '../methods/method-handler';

/**
 * Cache hints a list result brings from its live sources (docs/operations.md §11 "Live lists"; wire
 * notes §3).
 */
export interface LiveCacheHints {
  /** The minimum ttlMs over the live answers merged in, ms; 0 when one was skipped. */
  readonly ttlMs: number;
  /** `private` when any live answer was private (or said nothing). */
  readonly cacheScope: 'public' | 'private';
}

/**
 * A list result with `lists: live` upstreams merged in: serialized like a catalog list, plus
 * the hints of its live answers, which the 2026 codec merges with the snapshot sources'
 * (minimum ttlMs, private wins).
 */
export class LiveListResult extends PreSerialized {
  constructor(
    parts: PreSerialized['parts'],
    /** undefined when no live upstream offers the list (the snapshot's hints alone). */
    readonly cacheHints: LiveCacheHints | undefined,
  ) {
    super(parts);
  }
}
