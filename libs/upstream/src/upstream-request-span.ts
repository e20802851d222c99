import { failSpan, inSpan, serverAttributes, SpanKind, traceCarrier } from '@app/observability';
import { isRecord } from './json-rpc';
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
        'mcp.method.name': method,
        ...serverAttributes(url),
        'mcp_gateway.source.id': upstreamId,
        'mcp_gateway.source.kind': 'upstream',
        ...(method === 'tools/call' && target !== undefined
          ? { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' }
          : {}),
      }),
    },
    async () => {
      const carrier = traceCarrier();
      const meta = isRecord(params?._meta) ? params._meta : {};
      // a rejection (UpstreamFailure) marks the span with its kind (inSpan)
      const answer = await send(
        { ...params, _meta: { ...meta, ...carrier } },
        { ...options, headers: { ...options.headers, ...carrier } },
      );
      if (answer.kind === 'error') failSpan(String(answer.code), answer.message);
      return answer;
    },
  );
}
