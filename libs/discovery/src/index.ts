export { DiscoveryModule } from './discovery.module';
export { BundleRefreshService } from './bundle-refresh.service';
export {
  MONOTONIC_MS,
  type MonotonicMs,
  RANDOM,
  type RandomSource,
  REFRESH_HEARTBEAT_JOB,
  RefreshScheduler,
} from './refresh-scheduler.service';
export {
  ManifestFetcher,
  classifyPullError,
  type FetchedManifest,
} from './manifest-fetcher.service';
export { ListChangedRefresh } from './list-changed-refresh.service';
export { DiscoveryCatalogRefresh } from './discovery-catalog-refresh';
