export { ExecutionModule } from './execution.module';
export { buildToolRequestHeaders, ToolExecutor } from './tool-executor.service';
export {
  type CallToolResult,
  FORWARDED_CALLER_HEADERS,
  type IncomingHeaders,
  type TextContent,
} from './call-tool-result';
export { compactJson } from './compact-json';
export {
  mapToolResponse,
  mapToolFailure,
  type ToolHttpResponse,
  type ToolCallFailure,
} from './map-tool-response';
export { applyOutputSchema, type OutputSchemaCheck } from './structured-output';
export { SHUTDOWN_REASON } from './tool-service-client';
export { CallCancellation, fanOut, type CancelReason } from './call-cancellation';
export {
  UpstreamExecutor,
  type UpstreamOutcome,
  type UpstreamCallContext,
} from './upstream-executor.service';
export { LiveListFetcher, type LiveListMethod, type LiveListOutcome } from './live-list-fetcher';
export {
  UpstreamListener,
  type UpstreamListenContext,
  type UpstreamListenFilter,
  type UpstreamListenSupport,
} from './upstream-listener.service';
export type { BundleCallTarget } from './bundle-call-target';
