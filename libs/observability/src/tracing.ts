import {
  context,
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

/** Whether spans are recorded and exported (startTracing ran). */
export function tracingOn(): boolean {
  return on;
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

/** The instrumentation scope of every span the gateway records. */
const SCOPE = 'mcp-gateway';

/**
 * Registers the SDK's provider (OTLP/HTTP exporter in batches, parent-based ratio sampler), the
 * W3C trace-context propagator and an AsyncLocalStorage context manager, so a span started
 * while a request is served is the parent of what that request causes. Returns the shutdown,
 * which flushes the spans still queued.
 */
export async function startTracing(settings: TracingSettings): Promise<() => Promise<void>> {
  const { TracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': settings.serviceVersion,
    }),
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(settings.samplingRatio),
    }),
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

/**
 * Runs `work` in a new span, its parent `parent` (default: the active span), and ends the span
 * with its outcome: a rejection marks it an error (`error.type`: the failure's `kind`, else
 * the error's name).
 */
export async function inSpan<T>(
  name: string,
  options: {
    kind?: SpanKind;
    attributes?: Attributes;
    /** Default: the active span; `'root'`: a trace of its own. */
    parent?: Context | 'root';
    startTime?: number;
  },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer(SCOPE);
  const parent = options.parent === 'root' ? ROOT_CONTEXT : (options.parent ?? context.active());
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      attributes: options.attributes,
      startTime: options.startTime,
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: err instanceof Error ? err.message : undefined,
    });
    // a failure that names its kind (UpstreamFailure's `kind`) says more than its class
    const kind = (err as { kind?: unknown } | null)?.kind;
    span.setAttribute(
      'error.type',
      typeof kind === 'string' ? kind : err instanceof Error ? err.name : 'Error',
    );
    throw err;
  } finally {
    span.end();
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

/** Adds attributes to the span of the work in progress (none when it is not recorded). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Marks the span in progress as failed, with `error.type`. */
export function failSpan(errorType: string, message?: string): void {
  const span = trace.getActiveSpan();
  if (span === undefined) return;
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
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

export { SpanKind };
