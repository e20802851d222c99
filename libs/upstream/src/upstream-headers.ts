import type { UpstreamDefinition } from '@app/config';
import { callerAuthorization, gatewayAuthorization } from '@app/identity';
import { tracingOn } from '@app/observability';

/** Incoming request headers, lower-cased, as node:http gives them. */
type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The W3C trace context keys, as headers and in `_meta` (SEP-414). */
export const TRACE_CONTEXT_KEYS: readonly string[] = ['traceparent', 'tracestate'];

/**
 * The extra headers of a request to an upstream (docs/operations.md §10 "Configuration"): its
 * `forwardHeaders` copied from the caller's request (absent ones not sent), and `Authorization` by
 * its `authorization` mode (`static`: the configured value; `passthrough`: the caller's own
 * header, against the MCP security guidance; `tokenExchange`: `sourceToken`, the token issued
 * for this upstream (docs/operations.md §14 "Credentials towards sources"), never the caller's;
 * `none`: never). List pulls have no caller: a static value, or with tokenExchange the gateway's
 * client-credentials token.
 */
export function upstreamRequestHeaders(
  upstream: UpstreamDefinition,
  incoming: IncomingHeaders,
  sourceToken?: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  // With traces on the gateway takes part in the trace: a traced request carries its own
  // context, any other none, and a caller's never rides beside it, whatever forwardHeaders
  // names (docs/operations.md §3 "Traces"); traces off: forwarded as configured.
  const traces = tracingOn();
  for (const name of upstream.forwardHeaders) {
    if (traces && TRACE_CONTEXT_KEYS.includes(name)) continue;
    const value = firstValue(incoming[name]);
    if (value !== undefined && value !== '') headers[name] = value;
  }
  const authorization = callerAuthorization(
    upstream.authorization,
    incoming.authorization,
    sourceToken,
  );
  if (authorization !== undefined) headers.authorization = authorization;
  return headers;
}

/**
 * The gateway's own headers towards an upstream, for the traffic of its shared session
 * (era probe, initialize, notifications/initialized, the GET stream, DELETE, answers to
 * server requests that belong to no caller) and for list pulls: `static` its configured
 * value, `tokenExchange` the gateway's client-credentials token (`gatewayToken`), else
 * nothing. Never a caller's header, never a forwardHeaders value (docs/security.md,
 * "Credentials towards sources").
 */
export function gatewayRequestHeaders(
  upstream: UpstreamDefinition,
  gatewayToken?: string,
): Record<string, string> {
  const authorization = gatewayAuthorization(upstream.authorization, gatewayToken);
  return authorization === undefined ? {} : { authorization };
}
