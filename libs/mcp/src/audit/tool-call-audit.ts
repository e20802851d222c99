import { Inject, Injectable, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { callerName, callerSubject, type CallerIdentity } from '@app/identity';
import type { IncomingHeaders } from '@app/execution';
import {
  annotateSpan,
  createJsonLineWriter,
  failSpan,
  loggedCallerText,
  MAX_LOGGED_CALLER_TEXT,
  tracedHere,
} from '@app/observability';
import {
  ForwardedError,
  GatewayError,
  GatewayErrorCode,
  ToolDeniedError,
} from '../errors/gateway-error';
import { SerializedResult } from '../methods/method-handler';

/** How a tools/call ended, for the audit: a result, a result with isError, a JSON-RPC error, or refused. */
export type AuditOutcome = 'ok' | 'isError' | 'error' | 'denied' | 'limited';

/** What the audit knows of the called tool: its published name and, when it exists, its source. */
export interface AuditedTool {
  /** The published name as the client sent it (at most 128 characters kept). */
  readonly name: string;
  /** The bundle or upstream id; undefined for a name no source publishes. */
  readonly sourceId?: string;
}

function isErrorResult(result: object): boolean {
  const value = result instanceof SerializedResult ? result.value : result;
  return (value as { isError?: unknown }).isError === true;
}

/**
 * Where audit lines go: one call per line, the line's own JSON members as text
 * (`"msg":"audit tools/call",…`, without braces; createJsonLineWriter adds level, time,
 * service and context).
 */
export type AuditSink = (members: string) => void;

/** Injection token for an AuditSink; default: stdout through createJsonLineWriter at LOG_LEVEL. */
export const AUDIT_SINK = Symbol('AUDIT_SINK');

/** A caller's text as the line copies it (cut, logger.ts); null when absent. */
const bounded = (value: string | readonly string[] | undefined): string | null =>
  loggedCallerText(value) ?? null;

/** A string or null as JSON. */
const json = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

/**
 * One JSON log line per tools/call, for either kind of source (docs/operations.md §14 "Audit"): who
 * (`subject`: the token's `sub`, else `client_id`; null without auth), which tool and source, how
 * it ended and how long it took in ms. Never a token and never a header value: the contract's
 * personal headers (`employee-no`, `virtual-employee-no`) and Authorization stay out; only
 * the request id and guid (contract §10 caller headers, not personal) are copied, to join the
 * line with the call's others (docs/operations.md §4).
 */
@Injectable()
export class ToolCallAudit {
  private readonly enabled: boolean;
  private readonly write: AuditSink = () => undefined;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(AUDIT_SINK) sink?: AuditSink,
  ) {
    this.enabled = config.mcp.audit.enabled;
    // straight to stdout as JSON text, not through Nest's Logger or pino's serializer: this
    // line is on every call's path
    if (this.enabled) this.write = sink ?? createJsonLineWriter(config.logLevel ?? 'info', 'Audit');
  }

  /**
   * @param outcome the handler's result, or what it threw
   * @param durationMs from the request reaching the handler to its answer
   */
  record(
    caller: CallerIdentity | undefined,
    tool: AuditedTool,
    outcome: { readonly result: object } | { readonly error: unknown },
    durationMs: number,
    headers: IncomingHeaders,
  ): void {
    const traced = tracedHere();
    if (!this.enabled && !traced) return;
    const [kind, code] =
      'result' in outcome ? classifyResult(outcome.result) : classifyError(outcome.error);
    // the request's span says the same (docs/operations.md §3 "Traces")
    if (traced) {
      annotateSpan({
        ...(tool.sourceId === undefined ? {} : { 'mcp_gateway.source.id': tool.sourceId }),
        'mcp_gateway.tool_call.outcome': kind,
        ...(code === undefined ? {} : { 'error.type': String(code) }),
      });
      // a tool's own failure is a successful JSON-RPC answer, and an error of the call
      // (OpenTelemetry MCP conventions: error.type `tool_error`)
      if (kind === 'isError') failSpan('tool_error');
    }
    if (!this.enabled) return;
    // `caller` is the namespaced key the rate limits use (sub:… / client:…); `subject` is the
    // token's own `sub` only, so a client id never reads as a user (docs/operations.md §14)
    const who = bounded(callerName(caller));
    const subject = bounded(callerSubject(caller));
    const clientId = bounded(caller?.clientId);
    const name = tool.name.slice(0, MAX_LOGGED_CALLER_TEXT);
    const source = tool.sourceId ?? null;
    const duration = Math.round(durationMs * 10) / 10;
    const requestId = bounded(headers['x-request-id']);
    const guid = bounded(headers.guid);
    this.write(
      `"msg":"audit tools/call","audit":"tools/call","caller":${json(who)},"subject":${json(subject)},"clientId":${json(clientId)},` +
        `"tool":${json(name)},"source":${json(source)},"outcome":"${kind}",` +
        `${code === undefined ? '' : `"errorCode":${JSON.stringify(code)},`}` +
        `"durationMs":${duration},"requestId":${json(requestId)},"guid":${json(guid)}`,
    );
  }
}

function classifyResult(result: object): [AuditOutcome, undefined] {
  return [isErrorResult(result) ? 'isError' : 'ok', undefined];
}

/** The error's code: the upstream's JSON-RPC code when forwarded, else the gateway's own code name. */
function classifyError(error: unknown): [AuditOutcome, string | number] {
  if (error instanceof ToolDeniedError) return ['denied', error.code];
  if (error instanceof ForwardedError) return ['error', error.rpcCode];
  if (error instanceof GatewayError)
    return [error.code === GatewayErrorCode.RateLimited ? 'limited' : 'error', error.code];
  return ['error', GatewayErrorCode.Internal];
}
