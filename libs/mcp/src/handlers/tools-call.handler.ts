import { Inject, Injectable, Optional } from '@nestjs/common';
import { GatewayMetrics } from '@app/observability';
import { ToolExecutor, type IncomingHeaders } from '@app/execution';
import {
  declaresExtension,
  Extension,
  GATEWAY_TOOL_PREFIX,
  isModernVersion,
  JsonRpcCode,
  RawJson,
} from '@app/wire';
import { allowsTool, type CallerAccess } from '@app/identity';
import {
  ArgumentValidators,
  CatalogRefresh,
  RegistryService,
  type ArgumentViolations,
  type BundleTool,
  type CatalogSnapshot,
  type CatalogTool,
} from '@app/registry';
import {
  ForwardedError,
  GatewayError,
  GatewayErrorCode,
  REGISTRY_UNAVAILABLE_MESSAGE,
  ToolDeniedError,
} from '../errors/gateway-error';
import { extractRawMember } from '../jsonrpc/raw-member';
import { paramHeaderMismatch, paramHeadersFor } from './header-params';
import {
  PLAIN_REQUEST,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type PreparedRequest,
  type ToolTarget,
  type HeaderMismatch,
} from '../methods/method-handler';
import { LiveLists } from './live-lists.service';
import { isHiddenAppTool } from '../servers/client-extensions';
import { MrtrCalls } from '../mrtr/mrtr-calls.service';
import { plain } from '../mrtr/upstream-mrtr-request';
import { legacyStructuredResult } from '../relay/legacy-result';
import { outputWrappedForLegacy, toolsJsonFor } from './revision-tool-fields';
import { UpstreamTasks } from '../tasks/upstream-tasks';
import { GatewayTasks } from '../tasks/gateway-tasks';
import { bundleTaskSupport } from '../tasks/bundle-task-support';
import { tasksNotDeclared } from '../tasks/task-errors';
import {
  CALL_TOOL,
  DESCRIBE_TOOL,
  SEARCH_TOOL,
  SELECT_TOOL,
  ToolSearch,
} from '../search/tool-search.service';
import { SelectTool } from '../search/select-tool';
import { VirtualServers } from '../servers/virtual-servers.service';
import { ToolCallAudit } from '../audit/tool-call-audit';
import { CallerLimits } from '../limits/caller-limits.service';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A 2025 request's params without its `task` (a task-augmented call), the same object when it has none. */
function withoutLegacyTask(
  params: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (params === undefined || !('task' in params)) return params;
  const { task: _task, ...rest } = params;
  return rest;
}

/**
 * The answer to arguments that break the tool's inputSchema: a tool execution error naming each
 * violated path, so the model can correct its call (MCP 2025-11-25, "Error Handling": input
 * validation errors are tool execution errors, not protocol errors).
 */
function invalidArguments(
  name: string,
  violations: ArgumentViolations,
  searchTime?: number,
): object {
  const text = [
    `Invalid arguments for tool ${name.slice(0, 128)}: they do not match its inputSchema, and the call was not sent.`,
    ...violations.map((line) => `- ${line}`),
  ].join('\n');
  const block =
    searchTime === undefined
      ? { type: 'text', text }
      : { type: 'text', text, _meta: { searchTime } };
  return { content: [block], isError: true };
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
  /** It takes the caller's bucket, then the tool's, itself (docs/operations.md §14). */
  readonly rateLimit = 'handler';

  constructor(
    private readonly registry: RegistryService,
    private readonly refresh: CatalogRefresh,
    private readonly executor: ToolExecutor,
    private readonly live: LiveLists,
    private readonly mrtr: MrtrCalls,
    private readonly tasks: UpstreamTasks,
    private readonly gatewayTasks: GatewayTasks,
    private readonly argumentChecks: ArgumentValidators,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional() @Inject(CallerLimits) private readonly limits: CallerLimits | null = null,
    @Optional() @Inject(ToolCallAudit) private readonly audit: ToolCallAudit | null = null,
    @Optional() @Inject(ToolSearch) private readonly search: ToolSearch | null = null,
    @Optional() @Inject(SelectTool) private readonly selectTool: SelectTool | null = null,
    @Optional() @Inject(VirtualServers) private readonly servers: VirtualServers | null = null,
  ) {}

  /**
   * The one catalog lookup of the call: the codec's header checks, the relay decision, the
   * call and its audit line all use it.
   */
  prepare(
    params: Readonly<Record<string, unknown>> | undefined,
    access?: CallerAccess,
  ): PreparedRequest {
    const name = params?.name;
    if (typeof name !== 'string') return PLAIN_REQUEST;
    if (this.search !== null && name.startsWith(GATEWAY_TOOL_PREFIX))
      return this.prepareSearchTool(name, params?.arguments, access);
    const tool = this.registry.current()?.get(name);
    const target: ToolTarget = { name, tool };
    // a live upstream's tool is in no snapshot: its prefix tells
    // (docs/operations.md §11 "Live lists")
    if (tool === undefined) return { mayRelay: this.live.ownerOf(name) !== undefined, target };
    // a tool the caller may not use is prepared for exactly like an unknown one
    // (docs/operations.md §13 "Access")
    const denied = access !== undefined && !allowsTool(access, tool.sourceId, tool.name);
    return {
      mayRelay: tool.route.kind === 'upstream' && !denied,
      target: denied ? { ...target, denied } : target,
    };
  }

  /**
   * The search tools (docs/operations.md §16): select tells the session list_changed on its
   * answer stream; call may relay what the tool it calls relays, as a direct call would.
   */
  private prepareSearchTool(name: string, args: unknown, access?: CallerAccess): PreparedRequest {
    const target: ToolTarget = { name, tool: undefined };
    if (name === SELECT_TOOL) return { mayRelay: true, target };
    const inner = isRecord(args) ? args.name : undefined;
    if (name !== CALL_TOOL || typeof inner !== 'string' || inner.startsWith(GATEWAY_TOOL_PREFIX))
      return { mayRelay: false, target };
    return { mayRelay: this.prepare({ name: inner }, access).mayRelay, target };
  }

  /**
   * 2026: the `Mcp-Param-*` headers of the tool's `x-mcp-header` arguments against the
   * arguments (docs/operations.md §11 "Checks"); an unknown tool is left to `handle` (-32602).
   */
  headerMismatch(
    params: Readonly<Record<string, unknown>> | undefined,
    headers: IncomingHeaders,
    prepared: PreparedRequest,
  ): HeaderMismatch | undefined {
    const tool = prepared.target?.tool;
    // a tool outside the grant is answered exactly as an unknown one, its headers unchecked:
    // a -32020 would tell that it exists
    return tool === undefined || prepared.target?.denied === true
      ? undefined
      : paramHeaderMismatch(tool, params?.arguments, headers);
  }

  /**
   * The call, admitted by the caller's rate limits (per subject and per (subject, tool),
   * docs/operations.md §14 "Rate limits per caller") and audited, one line whatever its end
   * (docs/operations.md §14 "Audit").
   */
  async handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    // the gateway's own search tools where search is on (docs/operations.md §16 "Tool search"),
    // under the caller's rate limits as every call (call_tool's are its tool's: counted there)
    if (
      this.search !== null &&
      typeof params?.name === 'string' &&
      params.name.startsWith(GATEWAY_TOOL_PREFIX) &&
      this.search.enabledFor(context.access)
    ) {
      if (params.name !== CALL_TOOL) await this.limits?.admit(context.caller);
      return this.searchTool(params.name, params, context);
    }
    const started = performance.now();
    const name = typeof params?.name === 'string' ? params.name : '';
    const prepared = context.prepared?.target;
    const target = prepared?.name === name ? prepared : undefined;
    try {
      // the caller's bucket now; the (caller, tool) one once the tool is one it may call (call)
      if (this.limits?.enabled === true) await this.limits.admit(context.caller);
      const result = await this.call(params, context, target, started);
      this.audited(name, target, { result }, started, context);
      return result;
    } catch (error) {
      this.audited(name, target, { error }, started, context);
      throw error;
    }
  }

  /**
   * One of the search tools: search and describe answer from the index, call runs the named tool
   * through `handle` as a direct call would (rate limits, grant, pins, argument checks, audit).
   */
  private async searchTool(
    name: string,
    params: Readonly<Record<string, unknown>>,
    context: MethodContext,
  ): Promise<MethodResult> {
    const search = this.search as ToolSearch;
    const args = params.arguments;
    if (
      name === SELECT_TOOL &&
      (this.selectTool === null ||
        !this.selectTool.offeredTo(context, isModernVersion(context.protocolVersion)))
    )
      throw this.notFound(name);
    const definition = search.definitionJson(name);
    if (definition === undefined) throw this.notFound(name);
    // its own bucket once it is known to be one the caller may call, as a source's tool
    // (admitTool): a made-up gateway__ name makes no bucket; call_tool's is its tool's
    if (name !== CALL_TOOL && this.limits?.enabled === true)
      await this.limits.admitTool(context.caller, name);
    // the gateway's own tools hold their callers to their own inputSchema, as a source's are
    const violations = this.argumentChecks.checkEntry(
      name,
      definition,
      args ?? {},
      extractRawMember(context.rawBody, ['params', 'arguments']) ?? '{}',
    );
    if (violations !== undefined) return invalidArguments(name, violations);
    const given = isRecord(args) ? args : {};
    const text = (value: unknown): object => ({
      content: [{ type: 'text', text: JSON.stringify(value) }],
      structuredContent: value,
    });
    switch (name) {
      case SEARCH_TOOL: {
        if (typeof given.query !== 'string' || given.query.trim() === '')
          return invalidArguments(name, ['/query: must say the task in words, not only spaces']);
        const limit = typeof given.limit === 'number' ? given.limit : 10;
        return text({ tools: search.search(given.query, limit, context) });
      }
      case DESCRIBE_TOOL: {
        const names = Array.isArray(given.names)
          ? given.names.filter((n): n is string => typeof n === 'string')
          : [];
        const described = search.describe([...new Set(names)], context);
        // the definitions with the Tool fields of the client's revision, as its tools/list gives
        // them (docs/operations.md §11 "Tools for each revision"): a 2025 client's outputSchema
        // matches the structuredContent its call gets
        const tools = toolsJsonFor(
          isModernVersion(context.protocolVersion),
          JSON.stringify(described.tools),
        );
        return text({ ...described, tools: JSON.parse(tools) as unknown });
      }
      case CALL_TOOL: {
        if (typeof given.name === 'string' && given.name.startsWith(GATEWAY_TOOL_PREFIX))
          return invalidArguments(name, [
            `/name: names one of the gateway's own tools; call ${given.name.slice(0, 128)} directly`,
          ]);
        // the inner call's arguments, byte for byte as the client wrote them
        const raw = extractRawMember(context.rawBody, ['params', 'arguments', 'arguments']);
        // the rest of the request's params are the inner call's, as a direct call's would be:
        // a 2026 retry's requestState and inputResponses (docs/operations.md §11 "Multi round-trip
        // and era bridging"), its _meta (progress token), a task request
        const { name: _outer, arguments: _given, ...rest } = params;
        return this.handle(
          {
            ...rest,
            name: given.name,
            ...(given.arguments === undefined ? {} : { arguments: given.arguments }),
          },
          {
            ...context,
            prepared: undefined,
            rawBody: raw === undefined ? '{}' : `{"params":{"arguments":${raw}}}`,
          },
        );
      }
      case SELECT_TOOL:
        // 2025 sessions only, where selection is on (docs/operations.md §16 "Tool selection"):
        // offered, checked above
        return (this.selectTool as SelectTool).select(given, context);
      default:
        throw this.notFound(name);
    }
  }

  private audited(
    name: string,
    target: ToolTarget | undefined,
    outcome: { readonly result: object } | { readonly error: unknown },
    started: number,
    context: MethodContext,
  ): void {
    if (this.audit === null) return;
    // a name the snapshot lacked when prepared is looked up again: a refresh may have found it
    const sourceId = (target?.tool ?? this.registry.current()?.get(name))?.sourceId;
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
    target: ToolTarget | undefined,
    started: number,
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
    // a pinned source's tool held for review: no call (docs/operations.md §6)
    const held = target?.tool === undefined ? await this.heldForReview(name, context) : undefined;
    if (held !== undefined) return held;
    const tool = await this.find(name, context, target);
    if (this.limits?.enabled === true) await this.limits.admitTool(context.caller, tool.name);
    // checked before anything is sent, whatever the route (docs/operations.md §6 "Argument
    // validation"): a model corrects its call from an isError result (MCP 2025-11-25 tools)
    // the arguments' text as the client wrote it: checked, and sent on byte for byte
    const raw =
      args === undefined || args === null
        ? undefined
        : extractRawMember(context.rawBody, ['params', 'arguments']);
    const violations = this.argumentChecks.check(tool, args ?? {}, raw ?? '{}');
    if (violations !== undefined) {
      this.metrics?.toolArgumentsRefused(tool.sourceId);
      // a bundle tool's result carries the call's duration, refused here or not (contract §10)
      return invalidArguments(
        name,
        violations,
        tool.route.kind === 'upstream' ? undefined : Math.round(performance.now() - started),
      );
    }
    if (tool.route.kind === 'upstream') {
      const { upstream, originalName } = tool.route;
      // Mcp-Param-* headers for x-mcp-header arguments, sent on to a 2026 upstream
      // (docs/operations.md §11 "Checks")
      const headerParams = paramHeadersFor(tool, args, context.headers);
      // The upstream gets its own name for the tool; everything else as the client sent it.
      // Rounds, input_required and upstream requests are MrtrCalls'
      // (docs/operations.md §11 "Multi round-trip and era bridging").
      const result = await this.mrtr.call(
        {
          upstream,
          method: 'tools/call',
          target: name,
          arguments: args,
          params: {
            // a 2025 client's task-augmented call runs synchronously: this gateway serves no
            // 2025 tasks/*, so the upstream's own task id would reach the client with nothing
            // to follow it (docs/operations.md §10 "Tasks")
            ...(isModernVersion(context.protocolVersion) ? params : withoutLegacyTask(params)),
            name: originalName,
            // arguments byte for byte, as the client wrote them (docs/operations.md §10 "Routing")
            ...(raw !== undefined && args !== undefined && args !== null
              ? { arguments: new RawJson(raw) }
              : {}),
          },
          requestHeaders: headerParams,
        },
        context,
      );
      // a CreateTaskResult gets the client's id for the task (docs/operations.md §10 "Tasks")
      return forClientEra(
        this.tasks.handOut(result, upstream, name, context),
        tool,
        context,
        !this.live.active,
      );
    }
    const rawArguments = args === undefined || args === null ? '{}' : (raw ?? JSON.stringify(args));
    // a task-capable bundle tool for a 2026 request that declared Tasks runs as a task
    // (docs/operations.md §10 "Tasks")
    const taskSupport = isModernVersion(context.protocolVersion)
      ? bundleTaskSupport(tool)
      : undefined;
    if (taskSupport !== undefined) {
      if (declaresExtension(context.clientCapabilities, Extension.tasks)) {
        const created = await this.gatewayTasks.start(tool as BundleTool, rawArguments, context);
        if (created !== undefined) return created;
        if (taskSupport === 'required')
          throw new ForwardedError(
            JsonRpcCode.InternalError,
            `Internal error: tool ${name.slice(0, 128)} runs only as a task, and no task can be kept now; try again`,
          );
      } else if (taskSupport === 'required') throw tasksNotDeclared();
    }
    // The catalog compiled the tool's outputSchema once; the call only applies it.
    const result = await this.executor.call(
      tool as BundleTool,
      rawArguments,
      context.headers,
      tool.validateOutput,
      context.signal,
      context.caller,
    );
    return forClientEra(result, tool, context, !this.live.active);
  }

  /**
   * The tool, or the "Tool not found" answer. A tool the caller may not use
   * (docs/operations.md §13 "Access") gets that same answer after the same wait for a refresh
   * as an unknown name (refreshForUnknownTool: shared, at most one per
   * `notFoundRefreshMinIntervalMillis`, so it costs the sources nothing a guessed name does
   * not): the caller cannot tell it from a tool that does not exist, by the answer or its time.
   */
  private async find(
    name: string,
    context: MethodContext,
    target: ToolTarget | undefined,
  ): Promise<CatalogTool> {
    const current = this.registry.current();
    const found = target === undefined ? current?.get(name) : target.tool;
    if (found !== undefined)
      return this.granted(found, context, current) ?? this.denied(found, false);
    // A live upstream's tools are listed per caller, never in the snapshot: routed by the
    // prefix of the published name, resolved through the caller's live list
    // (docs/operations.md §11 "Live lists").
    if (this.live.active) {
      const live = await this.live.toolFor(name, context);
      // in no catalog: judged by its own listed JSON
      if (live !== undefined)
        return this.granted(live, context, undefined) ?? this.denied(live, false);
    }
    await this.refresh.refreshForUnknownTool();
    const catalog = this.registry.current();
    if (catalog === undefined)
      throw new GatewayError(GatewayErrorCode.RegistryUnavailable, REGISTRY_UNAVAILABLE_MESSAGE);
    const tool = catalog.get(name);
    if (tool === undefined) throw this.notFound(name);
    return this.granted(tool, context, catalog) ?? this.denied(tool, true);
  }

  /**
   * The answer to a call of a tool held for review (docs/operations.md §6 "Pinned tool
   * definitions"): an isError result saying so, to a caller granted its source; to any other
   * caller exactly the unknown tool's answer, after the same wait (find). undefined when the
   * name is not held.
   */
  private async heldForReview(name: string, context: MethodContext): Promise<object | undefined> {
    const held = this.registry.heldForReview(name);
    if (held === undefined) return undefined;
    const access = context.access;
    const allowed =
      this.servers === null
        ? access === undefined || allowsTool(access, held.sourceId, held.name)
        : this.servers.mayUseUnlisted(access, held.sourceId, held.name);
    if (!allowed) {
      this.metrics?.toolNotFound();
      await this.refresh.refreshForUnknownTool();
      throw new ToolDeniedError(`Tool not found: ${name.slice(0, 128)}`);
    }
    const text = `Tool ${name.slice(0, 128)} is held for review: its definition is new or changed since an operator approved it, so the gateway serves it neither as it was nor as it is now. It is served again once an operator approves the change.`;
    return { content: [{ type: 'text', text }], isError: true };
  }

  /**
   * The tool when this caller may use it: granted (docs/operations.md §13 "Access") and, for an
   * app-only tool, a client that declared MCP Apps (docs/operations.md §10 "Extensions");
   * undefined when not (denied).
   */
  private granted(
    tool: CatalogTool,
    context: MethodContext,
    catalog: CatalogSnapshot | undefined,
  ): CatalogTool | undefined {
    const access = context.access;
    return (access === undefined || allowsTool(access, tool.sourceId, tool.name)) &&
      !isHiddenAppTool(catalog, tool, context.clientCapabilities)
      ? tool
      : undefined;
  }

  /**
   * A tool the caller may not use: on the wire exactly the unknown tool's answer, after the same
   * wait (find) unless it was waited for already; the audit line says denied
   * (docs/operations.md §14 "Audit").
   */
  private async denied(tool: CatalogTool, refreshed: boolean): Promise<never> {
    this.metrics?.toolNotFound();
    if (!refreshed) await this.refresh.refreshForUnknownTool();
    throw new ToolDeniedError(`Tool not found: ${tool.name.slice(0, 128)}`);
  }

  private notFound(name: string): GatewayError {
    this.metrics?.toolNotFound();
    return new GatewayError(GatewayErrorCode.ToolNotFound, `Tool not found: ${name.slice(0, 128)}`);
  }
}

/**
 * A tool's result as the client's era has it: for a 2025 client, `structuredContent` wrapped
 * as its outputSchema was in tools/list (legacyStructuredResult, wire notes §2.4, G-26); a
 * result that needs no change is returned as it is (a passed-on upstream text stays one).
 * `schemasWrapped`: whether tools/list wraps schemas at all — live lists pass every tool's
 * fields on as they are (docs/operations.md §11 "Live lists"), so then only a value that is
 * not an object is wrapped.
 */
function forClientEra(
  result: MethodResult,
  tool: CatalogTool,
  context: MethodContext,
  schemasWrapped: boolean,
): MethodResult {
  if (isModernVersion(context.protocolVersion)) return result;
  return (
    legacyStructuredResult(plain(result), schemasWrapped && outputWrappedForLegacy(tool)) ?? result
  );
}
