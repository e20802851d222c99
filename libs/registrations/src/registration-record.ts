import type { RegisteredUpstreamConfig } from '@app/config';

/**
 * The registration store as this replica sees it: whether it answers, and the last time it
 * came back empty (Redis restarted without data, flushed, failed over to an empty replica)
 * and was re-seeded from the registrations the replicas had applied.
 */
export interface RegistrationStoreStatus {
  readonly available: boolean;
  /** How often this replica found the store reset since it started. */
  readonly resets: number;
  readonly lastReset?: {
    readonly detectedAt: string;
    /** Registrations this replica wrote back (others may have been written by other replicas). */
    readonly restored: number;
  };
}

/**
 * A registration as the store keeps it (docs/operations.md §15 "Shared and durable"): the config
 * fields and who/when.
 */
export interface StoredRegistration {
  readonly upstream: RegisteredUpstreamConfig;
  /** ms since the epoch. */
  readonly createdAt: number;
  /** ms since the epoch; changes with every PATCH (replicas compare it to pick changes up). */
  readonly updatedAt: number;
  readonly createdBy: string;
  readonly updatedBy: string;
  /**
   * Assigned by the store on every write from one counter of the store (never reused for an id
   * that is deleted and registered again); 0 for a record stored before versions existed.
   */
  readonly version: number;
}
