export { RegistryModule } from './registry.module';
export {
  type CatalogPublishedListener,
  type UpstreamAnnouncedListener,
  RegistryService,
} from './registry.service';
export type { StoredCopy } from './bundle/bundle-intake';
export type { Reviewed, ToolBundlesView, UpstreamsView } from './source-views';
export { Clock } from './clock';
export { type BundlePullResult } from './pull-result';
export { TimeSlicer } from './time-slicer';
export { CatalogRefresh } from './catalog-refresh';
export {
  PULL_ERROR_TYPES,
  type PullErrorType,
  type ManifestProblem,
} from './manifest/manifest-errors';
export type { AcceptedManifest, ManifestTool, PublishedTool } from './manifest/manifest.types';
export {
  validateManifest,
  TOOL_NAME_PATTERN,
  type ManifestExpectations,
  type ManifestValidation,
} from './manifest/validate-manifest';
export { SchemaChecker, type SchemaProblem } from './manifest/schema-checker';
export { dialectOf, SUPPORTED_DIALECTS, type SchemaDialect } from './manifest/schema-dialects';
export {
  mergeCatalog,
  compareCodeUnits,
  type MergeLimits,
  type MergeResult,
} from './catalog/merge-catalog';
export type { SourceContribution } from './catalog/source-contribution';
export {
  CatalogHistory,
  CATALOG_HISTORY_CAPACITY,
  type CatalogHistoryEntry,
  type CatalogHistoryView,
  type CatalogPublishedEntry,
  type CatalogRejectedEntry,
} from './catalog/catalog-history';
export { CatalogSnapshot, diffCatalogs, type CatalogDiff } from './catalog/catalog-snapshot';
export type {
  CatalogTool,
  ToolRoute,
  BundleRoute,
  UpstreamRoute,
  BundleTool,
  UpstreamTool,
  OutputValidator,
} from './catalog/catalog-tool';
export { OutputValidators } from './catalog/output-validators';
export { PinnedTools, type ApprovalOutcome } from './pins/pinned-tools.service';
export type { HeldTool, HeldToolView, SourceReviewView } from './pins/tool-pins';
export type { DefinitionChange } from './pins/definition-digest';
export {
  ArgumentValidators,
  validatesArguments,
  type ArgumentViolations,
} from './catalog/argument-validators';
export type {
  BundleStatus,
  BundleStatusView,
  CopySource,
  LastGoodCopy,
} from './state/bundle-record';
export { CatalogExtras, templateMatcher, type CatalogFeatures } from './catalog/catalog-extras';
export { ownsItsViews } from './catalog/own-views';
export type {
  CatalogPrompt,
  CatalogResource,
  LeftOutItem,
  UpstreamContribution,
} from './upstream/upstream-contribution';
export { publishNames, MAX_PUBLISHED_NAME } from './upstream/published-names';
export {
  UPSTREAM_PULL_ERROR_TYPES,
  type UpstreamPullErrorType,
  type UpstreamPullResult,
  type UpstreamLists,
  type UpstreamItem,
  type UpstreamListHints,
  type UpstreamListKey,
} from './upstream/upstream-pull-result';
export type { UpstreamStatus, UpstreamStatusView } from './upstream/upstream-record';
export type { UpstreamPullState } from './upstream/upstream-intake';
export type { PartialSource, SourceKind, SourcePulls } from './source-intake';
export {
  LiveListMerger,
  type LiveListAnswer,
  type LiveListKey,
  type LiveMerge,
  type LiveVisibility,
} from './upstream/live-lists';
export { leftOutLogLines, LEFT_OUT_LOGGED_PER_LIST } from './upstream/left-out-log';
