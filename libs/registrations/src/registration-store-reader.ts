import { Logger } from '@nestjs/common';
import type { GatewayMetrics } from '@app/observability';
import { redisFailureText } from '@app/redis';
import type { RegistrationStoreStatus } from './registration-record';
import type { AppliedRegistrations } from './applied-registrations';
import {
  RegistrationStoreUnavailableError,
  type RegistrationStore,
  type StoreSnapshot,
} from './registration-store';
import { ReplicaTombstones } from './registration-tombstones';

/** A write that changed nothing because the store did not answer (the admin API's 503). */
export interface StoreUnavailable {
  readonly kind: 'unavailable';
  /** Why, for the refusal's message: never a host, a port or a credential. */
  readonly detail: string;
  /** The write was sent and not answered: it may still be applied when Redis wakes. */
  readonly outcomeUnknown: boolean;
}

function unavailable(detail: string, outcomeUnknown = false): StoreUnavailable {
  return { kind: 'unavailable', detail, outcomeUnknown };
}

/**
 * Reads the registration store for this replica and writes to it under the generation it
 * read (operations §15 "When Redis comes back empty"): a store without this replica's marker
 * lost its data and is re-seeded from what the replica applied and the deletions it made or
 * saw (kept here, since the store's own tombstones go with its data), while what was applied
 * stays served; a store that does not answer leaves what was applied as it is. Callers
 * serialize the calls.
 */
export class RegistrationStoreReader {
  private readonly logger = new Logger('Admin');
  /** The store's generation marker as last read; undefined until a read succeeded. */
  private generation?: string;
  /** The Redis master's replication id as last read (StoreSnapshot.server). */
  private server?: string;
  private storeDown = false;
  private resets = 0;
  private lastReset?: RegistrationStoreStatus['lastReset'];
  private readonly tombstones: ReplicaTombstones;

  constructor(
    private readonly store: RegistrationStore,
    private readonly applied: AppliedRegistrations,
    private readonly metrics: GatewayMetrics | null,
    private readonly now: () => number = Date.now,
  ) {
    this.tombstones = new ReplicaTombstones(now);
  }

  /** This replica stored the record of `id` (a POST or PATCH): a deletion of it is history. */
  stored(id: string): void {
    this.tombstones.forget(id);
  }

  /** This replica deleted `id` at `version` (a DELETE): remembered against a later re-seed. */
  deleted(id: string, version: number): void {
    this.tombstones.note({ id, version, deletedAt: this.now() });
  }

  status(): RegistrationStoreStatus {
    return {
      available: !this.storeDown,
      resets: this.resets,
      ...(this.lastReset === undefined ? {} : { lastReset: this.lastReset }),
    };
  }

  /**
   * Reads the store and applies it; false when it could not be read (what was applied stays).
   * A store without this replica's generation marker lost its data: it is re-seeded first.
   */
  async sync(): Promise<boolean> {
    let snapshot: StoreSnapshot;
    try {
      snapshot = await this.store.read();
      if (
        snapshot.generation === undefined ||
        (this.generation !== undefined && snapshot.generation !== this.generation)
      )
        snapshot = await this.reseed(snapshot);
      else if (
        this.generation !== undefined &&
        this.server !== undefined &&
        snapshot.server !== undefined &&
        snapshot.server !== this.server
      )
        snapshot = await this.restore(snapshot);
      else {
        // under the same generation an applied id the store no longer holds was deleted (by
        // another replica, or by a re-seed's tombstone); its tombstone may be gone already
        if (this.generation !== undefined) this.noteVanished(snapshot);
        this.generation = snapshot.generation;
      }
      this.server = snapshot.server;
      this.learn(snapshot);
      if (this.storeDown) this.logger.log('The registration store answers again');
      this.storeDown = false;
    } catch (err) {
      if (!this.storeDown)
        this.logger.warn(
          `Registered upstreams could not be read (${redisFailureText(err)}); keeping the ones applied`,
        );
      this.storeDown = true;
      return false;
    }
    this.applied.applyAll(
      snapshot.registrations,
      await this.applied.guardChanged(snapshot.registrations),
    );
    return true;
  }

  /** Deletions the store holds are remembered; an id it holds live is not deleted (any more). */
  private learn(snapshot: StoreSnapshot): void {
    for (const t of snapshot.deleted) this.tombstones.note(t);
    for (const r of snapshot.registrations) this.tombstones.forget(r.upstream.id);
  }

  private noteVanished(snapshot: StoreSnapshot): void {
    const present = new Set(snapshot.registrations.map((r) => r.upstream.id));
    for (const r of this.applied.records())
      if (!present.has(r.upstream.id))
        this.tombstones.note({ id: r.upstream.id, version: r.version, deletedAt: this.now() });
  }

  /**
   * The store has no marker (never used, or reset: Redis restarted without its data, was
   * flushed, failed over to an empty replica) or another one (re-seeded by another replica
   * after a reset). A replica that had read it writes back every registration it applied and
   * every deletion it remembers, merged per id with what other replicas re-seeded (the higher
   * version wins, a deletion beats a record of its version: registration-tombstones.ts); the
   * registrations stay served throughout, until the merged store is read.
   */
  private async reseed(found: StoreSnapshot): Promise<StoreSnapshot> {
    const previous = this.generation;
    const records = previous === undefined ? [] : this.applied.records();
    const deleted = previous === undefined ? [] : this.tombstones.list();
    const seeded = await this.store.seed(previous, records, deleted);
    this.generation = seeded.generation;
    if (previous !== undefined) {
      this.resets += 1;
      this.lastReset = { detectedAt: new Date().toISOString(), restored: seeded.written };
      this.metrics?.registrationStoreReset();
      this.logger.warn(
        `The registration store was reset (${found.generation === undefined ? 'its generation marker is gone: Redis restarted without its data, was flushed or failed over to an empty replica' : 'another replica re-seeded it after a reset'}); ` +
          `the ${records.length} registrations applied here stay served, ${seeded.written} written back` +
          (seeded.removed === 0
            ? ''
            : `, ${seeded.removed} removed again (deleted before the reset, re-seeded by a replica that had not read the deletion)`),
      );
    }
    return seeded.generation === found.generation && seeded.written === 0 && seeded.removed === 0
      ? found
      : await this.store.read();
  }

  /**
   * The store kept its marker but another master serves it (a Sentinel or Cluster failover, a
   * restart from a persisted copy): replication is asynchronous, so the writes acknowledged
   * just before may be missing. What this replica applied and the deletions it remembers are
   * written back where the store lacks them or holds an older version; deletions the store
   * holds still win (docs/operations.md §5 "What a failover may lose").
   */
  private async restore(found: StoreSnapshot): Promise<StoreSnapshot> {
    const restored = await this.store.seed(
      this.generation,
      this.applied.records(),
      this.tombstones.list(),
      'restore',
    );
    if (restored.written > 0 || restored.removed > 0)
      this.logger.warn(
        `The registration store is served by another Redis master (a failover or a restart); ` +
          `${restored.written} registrations written back, ${restored.removed} removed again, ` +
          `that it had lost`,
      );
    return restored.written === 0 && restored.removed === 0 ? found : await this.store.read();
  }

  /**
   * Runs one store write under the generation this replica read. A store that was reset or
   * re-seeded since answers `generation`: it is read (and re-seeded) and the write tried once
   * more. Redis not answering is a 503: nothing was changed, or (`outcomeUnknown`) the write was
   * sent and may still be applied when Redis wakes.
   */
  async write<R extends { readonly kind: string }>(
    command: (generation: string) => Promise<R>,
  ): Promise<Exclude<R, { readonly kind: 'generation' }> | StoreUnavailable> {
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (attempt > 0 || this.generation === undefined) await this.sync();
        if (this.generation === undefined) return unavailable('it could not be read');
        const result = await command(this.generation);
        if (result.kind !== 'generation') return result as Exclude<R, { kind: 'generation' }>;
      }
      return unavailable('it was reset while the change was written; try again');
    } catch (err) {
      if (!(err instanceof RegistrationStoreUnavailableError)) throw err;
      return unavailable(err.message, err.outcomeUnknown);
    }
  }
}
