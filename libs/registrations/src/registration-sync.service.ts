import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics } from '@app/observability';
import { CatalogRefresh, RegistryService } from '@app/registry';
import { UpstreamConnections } from '@app/upstream';
import { AppliedRegistrations } from './applied-registrations';
import type { RegistrationStore } from './registration-store';
import { RegistrationStoreReader } from './registration-store-reader';
import { REGISTRATION_STORE, UPSTREAM_ADDRESS_GUARD } from './registration-tokens';
import type { UpstreamAddressGuard } from './upstream-address-guard';

/**
 * The runtime registrations as an intake of the registry (docs/architecture.md "Sources as
 * intakes"): the store (Redis, or memory), what this replica applied from it, and the reader
 * that applies the store's registrations to the registry with the boot rules, in one order on
 * every replica (docs/operations.md §15 "One answer on every replica"). DiscoveryModule reads
 * the store on its own timetable (RegistrationStorePuller); the admin API writes through
 * `exclusive`, so a change and a read of the store never interleave.
 */
@Injectable()
export class RegistrationSync implements OnApplicationShutdown {
  readonly applied: AppliedRegistrations;
  readonly reader: RegistrationStoreReader;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    registry: RegistryService,
    connections: UpstreamConnections,
    refresh: CatalogRefresh,
    @Inject(REGISTRATION_STORE) readonly store: RegistrationStore,
    @Inject(UPSTREAM_ADDRESS_GUARD) readonly guard: UpstreamAddressGuard,
    @Optional() @Inject(GatewayMetrics) metrics: GatewayMetrics | null = null,
  ) {
    // a changed registration is pulled by a round that starts after now (the contract §8
    // one: throttled, never dropped)
    this.applied = new AppliedRegistrations(config, registry, connections, guard, () => {
      void refresh.refreshForUnknownTool();
    });
    this.reader = new RegistrationStoreReader(store, this.applied, metrics);
  }

  /** Reads the store and applies what it holds; after shutdown, nothing. */
  sync(): Promise<void> {
    return this.exclusive(async () => {
      if (!this.closed) await this.reader.sync();
    });
  }

  /** Runs `task` after every change and read queued before it. */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.store.close();
  }
}
