import { Logger } from '@nestjs/common';
import type { GatewayMetrics } from '@app/observability';
import type { RegistrationStoreStatus } from './admin-upstream-record';
import type { AppliedRegistrations } from './applied-registrations';
import {
  RegistrationStoreUnavailableError,
  type RegistrationStore,
  type StoreSnapshot,
} from './registration-store';
import { storeUnavailable, type AdminRefusal } from './registration-views';

/**
 * Reads the registration store for this replica and writes to it under the generation it
 * read (operations §15 "When Redis comes back empty"): a store without this replica's marker
 * lost its data and is re-seeded from what the replica applied, which stays served; a store
 * that does not answer leaves what was applied as it is. Callers serialize the calls.
 */
export class RegistrationStoreReader {
  private readonly logger = new Logger('Admin');
  /** The store's generation marker as last read; undefined until a read succeeded. */
  private generation?: string;
  private storeDown = false;
  private resets = 0;
  private lastReset?: RegistrationStoreStatus['lastReset'];

  constructor(
    private readonly store: RegistrationStore,
    private readonly applied: AppliedRegistrations,
    private readonly metrics: GatewayMetrics | null,
  ) {}

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
      else this.generation = snapshot.generation;
      if (this.storeDown) this.logger.log('The registration store answers again');
      this.storeDown = false;
    } catch (err) {
      if (!this.storeDown)
        this.logger.warn(
          `Registered upstreams could not be read (${err instanceof Error ? err.message : typeof err}); keeping the ones applied`,
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

  /**
   * The store has no marker (never used, or reset: Redis restarted without its data, was
   * flushed, failed over to an empty replica) or another one (re-seeded by another replica
   * after a reset). A replica that had read it writes back every registration it applied
   * (ids the store lacks); the registrations stay served throughout.
   */
  private async reseed(found: StoreSnapshot): Promise<StoreSnapshot> {
    const previous = this.generation;
    const records = previous === undefined ? [] : this.applied.records();
    const seeded = await this.store.seed(previous, records);
    this.generation = seeded.generation;
    if (previous !== undefined) {
      this.resets += 1;
      this.lastReset = { detectedAt: new Date().toISOString(), restored: seeded.written };
      this.metrics?.registrationStoreReset();
      this.logger.warn(
        `The registration store was reset (${found.generation === undefined ? 'its generation marker is gone: Redis restarted without its data, was flushed or failed over to an empty replica' : 'another replica re-seeded it after a reset'}); ` +
          `the ${records.length} registrations applied here stay served, ${seeded.written} written back`,
      );
    }
    return seeded.generation === found.generation && seeded.written === 0
      ? found
      : await this.store.read();
  }

  /**
   * Runs one store write under the generation this replica read. A store that was reset or
   * re-seeded since answers `generation`: it is read (and re-seeded) and the write tried once
   * more. Redis not answering is a 503: nothing was changed.
   */
  async write<R extends { readonly kind: string }>(
    command: (generation: string) => Promise<R>,
  ): Promise<Exclude<R, { readonly kind: 'generation' }> | AdminRefusal> {
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (attempt > 0 || this.generation === undefined) await this.sync();
        if (this.generation === undefined) return storeUnavailable('it could not be read');
        const result = await command(this.generation);
        if (result.kind !== 'generation') return result as Exclude<R, { kind: 'generation' }>;
      }
      return storeUnavailable('it was reset while the change was written; try again');
    } catch (err) {
      if (!(err instanceof RegistrationStoreUnavailableError)) throw err;
      return storeUnavailable(err.message);
    }
  }
}
