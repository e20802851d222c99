import { Inject, Injectable, Optional } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import type { IncomingHeaders } from '@app/execution';
import { createFieldLogger } from '@app/observability';
import {
  ForwardedError,
  GatewayError,
  GatewayErrorCode,
  ToolDeniedError,
} from '../errors/gateway-error';
import { SerializedResult } from '../handlers/method-handler';

/** How a tools/call ended, for the audit: a result, a result with isError, a JSON-RPC error, or refused. */
export type AuditOutcome = 'ok' | 'isError' | 'error' | 'denied' | 'limited';

/** What the audit knows of the called tool: its published name and, when it exists, its source. */
export interface AuditedTool {
  /** The published name as the client sent it (at most 128 characters kept). */
  readonly name: string;
  /** The bundle or upstream id; undefined for a name no source publishes. */
  readonly sourceId?: string;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isErrorResult(result: object): boolean {
  const value = result instanceof SerializedResult ? result.value : result;
  return (value as { isError?: unknown }).isError === true;
}

/** Where audit lines go: one call per line, the line's fields. */
export type AuditSink = (line: Readonly<Record<string, unknown>>) => void;

/** Injection token for an AuditSink; default: stdout through createFieldLogger at LOG_LEVEL. */
export const AUDIT_SINK = Symbol('AUDIT_SINK');

/**
 * One JSON log line per tools/call, for either kind of source (issue 12 §5): who (`subject`:
 * the token's `sub`, else `client_id`; null without auth), which tool and source, how it
 * ended and how long it took in ms. Never a token and never a header value: the contract's
 * personal headers (`employee-no`, `virtual-employee-no`) and Authorization stay out; only
 * the request id and guid (contract §10 caller headers, not personal) are copied, to join the
 * line with the call's others (docs/operations.md §4).
 */
@Injectable()
export class ToolCallAudit {
  private readonly enabled: boolean;
  private readonly sink: AuditSink;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(AUDIT_SINK) sink?: AuditSink,
  ) {
    this.enabled = config.mcp.audit.enabled;
    if (sink !== undefined) this.sink = sink;
    else if (!this.enabled) this.sink = () => undefined;
    else {
      // straight to pino, not through Nest's Logger: this line is on every call's path
      const logger = createFieldLogger(config.logLevel ?? 'info', 'Audit');
      this.sink = (line) => logger.info(line);
    }
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
    if (!this.enabled) return;
    const [kind, code] =
      'result' in outcome ? classifyResult(outcome.result) : classifyError(outcome.error);
    this.sink({
      msg: 'audit tools/call',
      audit: 'tools/call',
      subject: caller?.subject ?? caller?.clientId ?? null,
      clientId: caller?.clientId ?? null,
      tool: tool.name.slice(0, 128),
      source: tool.sourceId ?? null,
      outcome: kind,
      ...(code === undefined ? {} : { errorCode: code }),
      durationMs: Math.round(durationMs * 10) / 10,
      requestId: firstValue(headers['x-request-id']) ?? null,
      guid: firstValue(headers.guid) ?? null,
    });
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
