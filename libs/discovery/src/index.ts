export * from './discovery.module';
export * from './bundle-refresh.service';
export * from './refresh-scheduler.service';
export {
  ManifestFetcher,
  classifyPullError,
  type FetchedManifest,
} from './manifest-fetcher.service';
export * from './list-changed-refresh.service';
