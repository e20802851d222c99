import { Inject, Injectable, Optional } from '@nestjs/common';
import { GatewayMetrics } from '@app/observability';
import { BundleRefreshService } from '@app/discovery';
import { ToolExecutor } from '@app/execution';
import { RawJson } from '@app/upstream';
import { RegistryService, type BundleTool, type CatalogTool } from '@app/registry';
import { ForwardedError, GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { extractRawMember } from '../jsonrpc/raw-member';
import { REGISTRY_UNAVAILABLE_MESSAGE } from './tools-list.handler';
import type { MethodContext, MethodHandler, MethodResult } from './method-handler';
import { UpstreamRouter } from './upstream-router';
import { ToolCallAudit } from '../audit/tool-call-audit';
import { CallerLimits } from '../limits/caller-limits.service';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `tools/call` for catalog tools. A name missing from the snapshot triggers one refresh of
 * every source (joining a refresh already running) before the answer "Tool not found"
 * (contract §8: replicas' snapshots may briefly differ). A failing tool is a result with
 * isError, from the executor; only protocol faults throw.
 */
@Injectable()
export class ToolsCallHandler implements MethodHandler {
  readonly method = 'tools/call';

  constructor(
    private readonly registry: RegistryService,
    private readonly refresh: BundleRefreshService,
    private readonly executor: ToolExecutor,
    private readonly upstreams: UpstreamRouter,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional() @Inject(CallerLimits) private readonly limits: CallerLimits | null = null,
    @Optional() @Inject(ToolCallAudit) private readonly audit: ToolCallAudit | null = null,
  ) {}

  mayRelay(params: Readonly<Record<string, unknown>> | undefined): boolean {
    const name = params?.name;
    return (
      typeof name === 'string' && this.registry.current()?.get(name)?.route.kind === 'upstream'
    );
  }

  /**
   * The call, admitted by the caller's rate limits (issue 12 §6: per subject and per (subject,
   * tool)) and audited, one line whatever its end (§5).
   */
  async handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    const started = performance.now();
    const name = typeof params?.name === 'string' ? params.name : '';
    try {
      await this.limits?.admit(context.caller, name);
      const result = await this.call(params, context);
      this.audited(name, { result }, started, context);
      return result;
    } catch (error) {
      this.audited(name, { error }, started, context);
      throw error;
    }
  }

  private audited(
    name: string,
    outcome: { readonly result: object } | { readonly error: unknown },
    started: number,
    context: MethodContext,
  ): void {
    if (this.audit === null) return;
    const sourceId = this.registry.current()?.get(name)?.sourceId;
    this.audit.record(
      context.caller,
      { name, sourceId },
      outcome,
      performance.now() - started,
      context.headers,
    );
  }

  private async call(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    const name = params?.name;
    if (typeof name !== 'string' || name === '') {
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        'Invalid params: params.name must be a non-empty string',
      );
    }
    const args = params?.arguments;
    if (args !== undefined && args !== null && !isRecord(args)) {
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        'Invalid params: params.arguments must be an object',
      );
    }
    const tool = await this.find(name);
    if (tool.route.kind === 'upstream') {
      // The upstream gets its own name for the tool; everything else as the client sent it.
      const raw = extractRawMember(context.rawBody, ['params', 'arguments']);
      try {
        return await this.upstreams.forward(
          tool.route.upstream,
          'tools/call',
          {
            ...params,
            name: tool.route.originalName,
            // arguments byte for byte, as the client wrote them (issue 10 §5)
            ...(raw !== undefined && args !== undefined && args !== null
              ? { arguments: new RawJson(raw) }
              : {}),
          },
          context,
          (message) => ({ content: [{ type: 'text', text: message }], isError: true }),
        );
      } catch (err) {
        // -32602 from an upstream for a tool it listed: its lists are stale (B23). Refresh, as
        // for a miss (throttled alike), without holding the error back from the client.
        if (err instanceof ForwardedError && err.rpcCode === -32602)
          void this.refresh.refreshForUnknownTool();
        throw err;
      }
    }
    const rawArguments =
      args === undefined || args === null
        ? '{}'
        : (extractRawMember(context.rawBody, ['params', 'arguments']) ?? JSON.stringify(args));
    // The catalog compiled the tool's outputSchema once; the call only applies it.
    return this.executor.call(
      tool as BundleTool,
      rawArguments,
      context.headers,
      tool.validateOutput,
      context.signal,
      context.caller,
    );
  }

  private async find(name: string): Promise<CatalogTool> {
    const found = this.registry.current()?.get(name);
    if (found !== undefined) return found;
    await this.refresh.refreshForUnknownTool();
    const catalog = this.registry.current();
    if (catalog === undefined)
      throw new GatewayError(GatewayErrorCode.RegistryUnavailable, REGISTRY_UNAVAILABLE_MESSAGE);
    const tool = catalog.get(name);
    if (tool === undefined) {
      this.metrics?.toolNotFound();
      throw new GatewayError(
        GatewayErrorCode.ToolNotFound,
        `Tool not found: ${name.slice(0, 128)}`,
      );
    }
    return tool;
  }
}
