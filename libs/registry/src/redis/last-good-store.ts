import { createHash } from 'node:crypto';
import type { LastGoodCopy } from '../state/bundle-record';
import type { UpstreamLists } from '../upstream/upstream-pull-result';

/** An upstream's last good lists as read back from the shared store, not yet checked. */
export interface StoredUpstreamLists {
  /** The lists as pulled (UpstreamLists shape), checked again before they are adopted. */
  readonly lists: unknown;
  /**
   * Which endpoint they were pulled from (sourceUrlDigest of its URL); absent in copies
   * written before it was recorded. A copy of another URL is another server's lists.
   */
  readonly urlDigest?: string;
  readonly fetchedAt: Date;
  readonly writtenBy: string;
}

/** A last-good copy as read back from the shared store, not yet validated. */
export interface StoredManifest {
  /** The manifest in the contract's format (§5), validated again before it is adopted. */
  readonly body: unknown;
  readonly fetchedAt: Date;
  /** Which gateway replica wrote it (identity/host/pid), for the log. */
  readonly writtenBy: string;
  /**
   * Which manifestUrl it was pulled from (sourceUrlDigest); absent in copies written before it
   * was recorded. A copy of another URL is another Tool Service's manifest.
   */
  readonly urlDigest?: string;
}

/** Reachability of the store as /actuator/toolBundles shows it. */
export interface StoreStatus {
  readonly configured: boolean;
  /** null until the first Redis call has answered or failed. */
  readonly available: boolean | null;
  /** Error type name of the last failure, e.g. RedisTimeoutError; never a message. */
  readonly lastFailureReason: string | null;
}

/**
 * The shared last-good copies (contract §11: "선택 Redis 공유 cache"). Never on the request
 * path, never a single point of failure: every method is bounded in time and never throws;
 * a store that is down, slow or returns garbage behaves as an empty one.
 */
export interface LastGoodStore {
  /** The stored copies of these bundles that exist and parse; the others are simply absent. */
  load(bundleIds: readonly string[]): Promise<ReadonlyMap<string, StoredManifest>>;
  /**
   * Writes a copy unless a newer one is stored already; fire and forget. `manifestUrl`: where it
   * was pulled from (recorded as sourceUrlDigest).
   */
  save(bundleId: string, manifestUrl: string, copy: LastGoodCopy): void;
  /**
   * The stored last good lists of these upstreams (docs/operations.md §10 "Lists"); the others are
   * absent.
   */
  loadUpstreams?(upstreamIds: readonly string[]): Promise<ReadonlyMap<string, StoredUpstreamLists>>;
  /**
   * Writes an upstream's adopted lists unless newer ones are stored already; fire and forget.
   * `source`: where they came from (upstreamSource: the URL and, for a registration, which).
   */
  saveUpstream?(upstreamId: string, source: string, lists: UpstreamLists, fetchedAt: Date): void;
  status(): StoreStatus;
  /**
   * Calls `listener` each time the store connects again after it was lost (a restart, a
   * Sentinel failover, a network cut): replication is asynchronous, so a copy written just
   * before a failover may be missing on the new master, and the registry writes back what it
   * holds (docs/operations.md §5 "What a failover may lose").
   */
  onReconnected?(listener: () => void): void;
}

export const LAST_GOOD_STORE = Symbol('LAST_GOOD_STORE');

/**
 * What a stored copy records of the source it came from (a bundle's manifestUrl; an upstream's
 * upstreamSource: the URL and, for a runtime registration, which one): a digest, not the URL
 * (the store is read by every replica's operators; a source URL is never shown,
 * docs/security.md). A copy of another source is not used (docs/operations.md §5 "Redis").
 */
export function sourceUrlDigest(source: string): string {
  return createHash('sha256').update(source).digest('base64url');
}
