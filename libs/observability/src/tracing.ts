import {
  context,
  diag,
  DiagLogLevel,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';

/**
 * OpenTelemetry traces (docs/operations.md §3 "Traces"): off unless `mcp.tracing.endpoint` is
 * set. The OpenTelemetry API is global by design (one provider per process), and so is this:
 * every lib asks `tracingOn()` — one boolean — before it builds a span, so a gateway without
 * tracing pays one branch per hop and loads none of the SDK.
 */
let on = false;
/** mcp.tracing.samplingRatio: the share of the traces the gateway starts that are recorded. */
let ratio = 1;

/** Whether spans are recorded and exported (startTracing ran). */
export function tracingOn(): boolean {
  return on;
}

/**
 * Whether the work in progress is in a span — recorded, or carrying a caller's trace context
 * that was not sampled — so what it causes gets spans (or that context) of its own. A request
 * the gateway did not sample runs with no span at all (its children ask this and skip
 * theirs): at a sampling ratio of 0.1, nine requests in ten pay one random number and this
 * test, not the spans' ids, contexts and attributes.
 */
export function tracedHere(): boolean {
  return on && trace.getActiveSpan() !== undefined;
}

/** The sampling decision for a trace the gateway starts itself (no caller context). */
export function sampleRoot(): boolean {
  return ratio >= 1 || Math.random() < ratio;
}

export interface TracingSettings {
  /** OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces. */
  readonly endpoint: string;
  /** Share of new traces sampled (0..1); a trace a caller started keeps its own decision. */
  readonly samplingRatio: number;
  readonly serviceName: string;
  readonly serviceVersion: string;
  /** Bound of one export, ms. */
  readonly exportTimeoutMillis: number;
}

/** The shortest time between two log lines about failed exports. */
const EXPORT_FAILURE_LOG_EVERY_MS = 60_000;

/**
 * Where the SDK's own warnings and errors go — above all a failed export (a collector that is
 * down, a wrong endpoint path answering 404): to the gateway's log, the first at once and then
 * at most one line a minute with how many were left out, so an operator sees that no trace
 * arrives without a line per batch (docs/operations.md §3 "Traces").
 */
export function sdkProblemLog(
  warn: (message: string) => void,
  now: () => number = Date.now,
): (message: string) => void {
  let lastAt: number | undefined;
  let leftOut = 0;
  return (message) => {
    const at = now();
    if (lastAt !== undefined && at - lastAt < EXPORT_FAILURE_LOG_EVERY_MS) {
      leftOut++;
      return;
    }
    lastAt = at;
    const more = leftOut === 0 ? '' : ` (${leftOut} more since the last line)`;
    leftOut = 0;
    warn(`OpenTelemetry SDK: ${message.slice(0, 300)}${more}`);
  };
}

/** The instrumentation scope of every span the gateway records. */
const SCOPE = 'mcp-gateway';

/**
 * Registers the SDK's provider (OTLP/HTTP exporter in batches, parent-based ratio sampler), the
 * W3C trace-context propagator and an AsyncLocalStorage context manager, so a span started
 * while a request is served is the parent of what that request causes. Returns the shutdown,
 * which flushes the spans still queued.
 */
export async function startTracing(
  settings: TracingSettings,
  warn: (message: string) => void = () => undefined,
): Promise<() => Promise<void>> {
  const problem = sdkProblemLog(warn);
  const text = (args: unknown[]): string =>
    args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ');
  diag.setLogger(
    {
      error: (...args: unknown[]) => problem(text(args)),
      warn: (...args: unknown[]) => problem(text(args)),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const { TracerProvider, BatchSpanProcessor, ParentBasedSampler, AlwaysOnSampler } =
    await import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { detectResources, envDetector, hostDetector, resourceFromAttributes } =
    await import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const provider = new TracerProvider({
    // what the deployment says of itself (OTEL_RESOURCE_ATTRIBUTES, e.g. k8s.pod.name, as the
    // SDK specification has every SDK read it) and the host's name, so spans tell replicas
    // apart; the service's name and version are the configuration's
    resource: detectResources({ detectors: [envDetector, hostDetector] }).merge(
      resourceFromAttributes({
        'service.name': settings.serviceName,
        'service.version': settings.serviceVersion,
      }),
    ),
    // a trace the gateway starts is sampled before any span exists (sampleRoot); a caller's
    // trace context keeps the caller's decision
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    // what a caller sends (a method, an id, a version) becomes a span's name or attributes:
    // bounded, so a request cannot make a span megabytes long
    spanLimits: { attributeValueLengthLimit: 256, attributeCountLimit: 64 },
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          url: settings.endpoint,
          timeoutMillis: settings.exportTimeoutMillis,
        }),
        scheduledDelayMillis: 1000,
        maxQueueSize: 4096,
        maxExportBatchSize: 512,
        exportTimeoutMillis: settings.exportTimeoutMillis,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  ratio = settings.samplingRatio;
  on = true;
  return async () => {
    on = false;
    await provider.shutdown();
  };
}

const headerGetter: TextMapGetter<Readonly<Record<string, string | string[] | undefined>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The caller's trace context: the `traceparent`/`tracestate` HTTP headers, else the same keys
 * in the request's `params._meta` (SEP-414: a client without header access puts them there).
 */
export function callerContext(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  meta: unknown,
): Context {
  if (headers.traceparent !== undefined)
    return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
  if (isRecord(meta) && typeof meta.traceparent === 'string') {
    const carrier: Record<string, string> = { traceparent: meta.traceparent };
    if (typeof meta.tracestate === 'string') carrier.tracestate = meta.tracestate;
    return propagation.extract(ROOT_CONTEXT, carrier, headerGetter);
  }
  return ROOT_CONTEXT;
}

/** The span work gets when nothing is recorded: every call on it does nothing. */
const UNRECORDED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `work` in a new span and ends the span with its outcome: a rejection marks it an error
 * (`error.type`: the failure's `kind`, else the error's name). Parent: by default the active
 * span, and no span at all when that is not recorded (an unsampled request's children);
 * `'root'`: a trace of its own, sampled at `mcp.tracing.samplingRatio`; a context: the
 * caller's, whose sampling decision is kept (none: sampled at the ratio).
 */
export async function inSpan<T>(
  name: string,
  options: {
    kind?: SpanKind;
    /** Built only when the span is recorded. */
    attributes?: () => Attributes;
    parent?: Context | 'root';
    /** The root sampling decision was taken already (sampleRoot), and it was yes. */
    rootSampled?: boolean;
    startTime?: number;
    /**
     * The span outlives `work`: when it resolves the span is left open and `work` (or what it
     * handed on) ends it; on a rejection it is ended here as always.
     */
    endsLater?: boolean;
  },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const given = options.parent;
  if (given === undefined && !tracedHere()) return work(UNRECORDED);
  const parent = given === 'root' ? ROOT_CONTEXT : (given ?? context.active());
  if (parent === ROOT_CONTEXT && options.rootSampled !== true && !sampleRoot())
    return work(UNRECORDED);
  const span = trace
    .getTracer(SCOPE)
    .startSpan(
      name,
      { kind: options.kind ?? SpanKind.INTERNAL, startTime: options.startTime },
      parent,
    );
  // a caller's context that was not sampled: nothing recorded here nor below, but the work
  // runs in it, so what it sends on carries the caller's decision (traceparent flags 00)
  if (!span.isRecording()) return context.with(trace.setSpan(parent, span), () => work(span));
  if (options.attributes !== undefined) span.setAttributes(options.attributes());
  let ended = options.endsLater !== true;
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    ended = true;
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: err instanceof Error ? err.message.slice(0, 256) : undefined,
    });
    // a failure that names its kind (UpstreamFailure's `kind`) says more than its class
    const kind = (err as { kind?: unknown } | null)?.kind;
    span.setAttribute(
      'error.type',
      typeof kind === 'string' ? kind : err instanceof Error ? err.name : 'Error',
    );
    throw err;
  } finally {
    if (ended) span.end();
  }
}

/** A span that already ended (its times measured by the caller), as a child of the active one. */
export function pastSpan(
  name: string,
  startTime: number,
  endTime: number,
  attributes?: Attributes,
): void {
  trace.getTracer(SCOPE).startSpan(name, { attributes, startTime }, context.active()).end(endTime);
}

/** `server.address` and `server.port` of a request to this URL (its scheme's port by default). */
export function serverAttributes(url: URL): Attributes {
  return {
    'server.address': url.hostname,
    'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
  };
}

/** Adds attributes to the span of the work in progress (none when it is not recorded). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Marks the span in progress (or `span`) as failed, with `error.type`. */
export function failSpan(errorType: string, message?: string, span = trace.getActiveSpan()): void {
  if (span === undefined) return;
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message?.slice(0, 256) });
}

/**
 * The active span's context as W3C headers (`traceparent`, and `tracestate` when there is one),
 * for a request the gateway sends on behalf of this span: HTTP headers, and `_meta` for MCP.
 */
export function traceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * An HTTP request the gateway sends on behalf of the work in progress, as a CLIENT span named
 * by its method when that work is traced (OpenTelemetry HTTP client conventions:
 * `http.request.method`, `url.full` without its query, `server.*`, `http.response.status_code`,
 * a 4xx or 5xx as an error); `send` gets the span's context as W3C headers (empty when not
 * traced) and answers the response's status, or undefined when there was none.
 */
export function tracedHttpRequest<T>(
  method: string,
  url: string,
  attributes: Attributes,
  send: (carrier: Record<string, string>) => Promise<T>,
  statusOf: (value: T) => number | undefined,
): Promise<T> {
  if (!tracedHere()) return send({});
  return inSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: () => {
        const target = new URL(url);
        return {
          'http.request.method': method,
          'url.full': `${target.origin}${target.pathname}`,
          ...serverAttributes(target),
          ...attributes,
        };
      },
    },
    async (span) => {
      const value = await send(traceCarrier());
      const status = statusOf(value);
      if (status !== undefined) {
        span.setAttribute('http.response.status_code', status);
        if (status >= 400) failSpan(String(status));
      }
      return value;
    },
  );
}

export { SpanKind };
