export {
  GatewayMetrics,
  type SourceStatus,
  type StreamCloseReason,
  type StreamRefusalReason,
  TOOL_CALL_OUTCOMES,
  type ToolCallOutcome,
  type ToolServiceStatusClass,
} from './gateway-metrics';
export {
  BatchedStdout,
  createJsonLineWriter,
  createRootLogger,
  flushLogs,
  loggedCallerText,
  MAX_LOGGED_CALLER_TEXT,
  PinoNestLogger,
  REDACTED_HEADERS,
} from './logger';
export { ObservabilityModule } from './observability.module';
export {
  annotateSpan,
  callerContext,
  failSpan,
  inSpan,
  pastSpan,
  sampleRoot,
  serverAttributes,
  SpanKind,
  startTracing,
  traceCarrier,
  tracedHere,
  tracedHttpRequest,
  tracingOn,
  type TracingSettings,
} from './tracing';
export type { Attributes, Span } from '@opentelemetry/api';
export {
  CountedWarning,
  THROTTLED_LINE_EVERY_MS,
  type ThrottledLine,
  ThrottledLines,
} from './throttled-lines';
