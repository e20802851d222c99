import { HttpModule } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { RegistrationsModule } from '@app/registrations';
import { RegistryModule } from '@app/registry';
import { SourceCredentialsModule } from '@app/identity';
import { UpstreamModule } from '@app/upstream';
import { UpstreamListPuller } from './upstream-list-puller.service';
import { BundleManifestPuller } from './bundle-manifest-puller';
import { BundleRefreshService } from './bundle-refresh.service';
import { SOURCE_PULLERS, type SourcePuller } from './source-puller';
import { ListChangedRefresh } from './list-changed-refresh.service';
import { ManifestFetcher } from './manifest-fetcher.service';
import { MONOTONIC_MS, RANDOM, RefreshScheduler } from './refresh-scheduler.service';
import { RegistrationStorePuller } from './registration-store-puller';

/**
 * DiscoveryModule: scheduled rounds over the sources' pullers — manifest pulls (over
 * @nestjs/axios) and upstream list pulls (over UpstreamModule's connections); results handed to
 * the registry as values — and the registration store, read on its own timetable
 * (RegistrationStorePuller), which adds and removes the runtime-registered upstreams.
 */
@Module({
  // HttpModule: manifest pulls through HttpService (its own axios instance; the agents and
  // timeouts are ManifestFetcher's, per request)
  imports: [
    ScheduleModule.forRoot(),
    HttpModule.register({}),
    RegistryModule,
    UpstreamModule,
    SourceCredentialsModule,
    RegistrationsModule,
  ],
  providers: [
    ManifestFetcher,
    BundleRefreshService,
    ListChangedRefresh,
    // the kinds of source a refresh round pulls, one puller each (SourcePuller)
    BundleManifestPuller,
    UpstreamListPuller,
    {
      provide: SOURCE_PULLERS,
      useFactory: (
        bundles: BundleManifestPuller,
        upstreams: UpstreamListPuller,
      ): SourcePuller[] => [bundles, upstreams],
      inject: [BundleManifestPuller, UpstreamListPuller],
    },
    // the registration store, read on its own timetable (its upstreams are pulled as above)
    RegistrationStorePuller,
    RefreshScheduler,
    { provide: RANDOM, useValue: Math.random },
    { provide: MONOTONIC_MS, useValue: () => performance.now() },
  ],
  exports: [BundleRefreshService, RefreshScheduler],
})
export class DiscoveryModule {}
