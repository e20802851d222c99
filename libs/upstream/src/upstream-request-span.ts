import {
  type Attributes,
  failSpan,
  inSpan,
  serverAttributes,
  SpanKind,
  traceCarrier,
  tracedHere,
  tracingOn,
} from '@app/observability';
import { setOwnMember } from '@app/wire';
import { isRecord } from './json-rpc';
import { TRACE_CONTEXT_KEYS } from './upstream-headers';
import type { UpstreamAnswer, UpstreamRequestOptions } from './upstream-types';

/**
 * One request to an upstream MCP server in a CLIENT span (docs/operations.md §3 "Traces"),
 * named `{mcp.method.name} {target}` as the OpenTelemetry conventions for MCP name a client
 * span. The span's context travels both ways an MCP server may read it: the `traceparent` and
 * `tracestate` HTTP headers, and the same keys in `params._meta` (SEP-414), where they replace
 * a caller's (whose span is this span's ancestor). Retries after a lost session or a changed
 * era stay inside the span.
 */
export function tracedUpstreamRequest(
  upstreamId: string,
  url: URL,
  method: string,
  params: Record<string, unknown> | undefined,
  options: UpstreamRequestOptions,
  send: (
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
  ) => Promise<UpstreamAnswer>,
): Promise<UpstreamAnswer> {
  const target =
    typeof params?.name === 'string'
      ? params.name
      : typeof params?.uri === 'string'
        ? params.uri
        : undefined;
  return inSpan(
    target === undefined ? method : `${method} ${target.slice(0, 200)}`,
    {
      kind: SpanKind.CLIENT,
      attributes: () => ({
        ...requestAttributes(upstreamId, url, method),
        ...(method === 'tools/call' && target !== undefined
          ? { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' }
          : {}),
      }),
    },
    async () => {
      const carrier = traceCarrier();
      const meta = isRecord(params?._meta) ? withoutTraceContext(params._meta) : {};
      // a rejection (UpstreamFailure) marks the span with its kind (inSpan)
      const answer = await send(
        { ...params, _meta: { ...meta, ...carrier } },
        { ...options, headers: { ...options.headers, ...carrier } },
      );
      if (answer.kind === 'error') failSpan(String(answer.code), answer.message);
      else if (method === 'tools/call' && answer.result.isError === true) failSpan('tool_error');
      return answer;
    },
  );
}

/**
 * A request of the connection's own that a traced request caused (the era probe, initialize
 * and notifications/initialized of the session it had to open first): a CLIENT span of its
 * own under that request's, whose context `send` gets as a carrier to put in the headers and
 * in `_meta`, so the upstream sees its session opened in the trace that waited for it
 * (docs/operations.md §3 "Traces"). Not traced here: `send` gets an empty carrier.
 */
export function tracedSessionRequest<T>(
  upstreamId: string,
  url: URL,
  method: string,
  send: (carrier: Readonly<Record<string, string>>) => Promise<T>,
): Promise<T> {
  if (!tracedHere()) return send(NO_CARRIER);
  return inSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: () => requestAttributes(upstreamId, url, method),
    },
    () => send(traceCarrier()),
  );
}

/** What every upstream request's CLIENT span says: the method, the server, the source. */
function requestAttributes(upstreamId: string, url: URL, method: string): Attributes {
  return {
    'mcp.method.name': method,
    ...serverAttributes(url),
    'mcp_gateway.source.id': upstreamId,
    'mcp_gateway.source.kind': 'upstream',
  };
}

const NO_CARRIER: Readonly<Record<string, string>> = Object.freeze({});

/** The params that carry a span's context in `_meta` (SEP-414), or none for an empty carrier. */
export function metaOf(
  carrier: Readonly<Record<string, string>>,
): { _meta: Record<string, string> } | undefined {
  return carrier === NO_CARRIER || Object.keys(carrier).length === 0
    ? undefined
    : { _meta: { ...carrier } };
}

/** `_meta` without a caller's `traceparent` and `tracestate`. */
function withoutTraceContext(meta: Record<string, unknown>): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(meta))
    if (!TRACE_CONTEXT_KEYS.includes(key)) setOwnMember(rest, key, meta[key]);
  return rest;
}

/**
 * The params of a request sent outside any span while traces are on (a trace the gateway did
 * not sample, or a caller's context it could not read): a caller's trace context in `_meta`
 * is not passed on as it came (docs/operations.md §3 "Traces": the gateway takes part in the
 * trace, so what reaches the upstream is its context or none, never a malformed one or one
 * the gateway did not follow). Traces off: the params as they are.
 */
export function untracedParams(
  params: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!tracingOn() || !isRecord(params?._meta)) return params;
  const meta = params._meta;
  if (!TRACE_CONTEXT_KEYS.some((key) => Object.hasOwn(meta, key))) return params;
  return { ...params, _meta: withoutTraceContext(meta) };
}
