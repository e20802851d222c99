import { Global, Module } from '@nestjs/common';
import {
  BundleRefreshService,
  DiscoveryCatalogRefresh,
  DiscoveryModule,
  RefreshScheduler,
} from '@app/discovery';
import { CatalogRefresh } from '@app/registry';

/**
 * Binds the registry's refresh port (CatalogRefresh) to DiscoveryModule's rounds, for every
 * module of the application: the front door asks for a refresh through the port and never
 * imports DiscoveryModule (docs/architecture.md).
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: CatalogRefresh,
      useFactory: (rounds: BundleRefreshService, scheduler: RefreshScheduler) =>
        new DiscoveryCatalogRefresh(rounds, scheduler),
      inject: [BundleRefreshService, RefreshScheduler],
    },
  ],
  exports: [CatalogRefresh],
})
export class CatalogRefreshModule {}
