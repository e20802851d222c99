import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { RegistryModule } from '@app/registry';
import { BundleRefreshService } from './bundle-refresh.service';
import { ManifestFetcher } from './manifest-fetcher.service';
import { MONOTONIC_MS, RANDOM, RefreshScheduler } from './refresh-scheduler.service';

/** DiscoveryModule: scheduled manifest pulls; results handed to the registry as values. */
@Module({
  imports: [ScheduleModule.forRoot(), RegistryModule],
  providers: [
    ManifestFetcher,
    BundleRefreshService,
    RefreshScheduler,
    { provide: RANDOM, useValue: Math.random },
    { provide: MONOTONIC_MS, useValue: () => performance.now() },
  ],
  exports: [BundleRefreshService, RefreshScheduler],
})
export class DiscoveryModule {}
