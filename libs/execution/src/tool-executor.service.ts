import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import {
  failSpan,
  GatewayMetrics,
  inSpan,
  loggedCallerText,
  serverAttributes,
  SpanKind,
  traceCarrier,
  tracedHere,
  type ToolCallOutcome,
  type ToolServiceStatusClass,
} from '@app/observability';
import { GATEWAY_CONFIG, type GatewayConfig, type ResolvedAuthorization } from '@app/config';
import {
  callerAuthorization,
  callerName,
  SourceCredentialError,
  SourceCredentials,
  type CallerIdentity,
} from '@app/identity';
import type { BundleCallTarget } from './bundle-call-target';
import {
  FORWARDED_CALLER_HEADERS,
  type CallToolResult,
  type IncomingHeaders,
} from './call-tool-result';
import { answerText, decodeAnswer } from './decode-answer';
import {
  MAX_ANSWER_DEPTH,
  mapToolFailure,
  mapToolResponse,
  type ToolCallFailure,
  type ToolHttpResponse,
} from './map-tool-response';
import { parseRetryAfter } from './retry-after';
import { AnswerBudget, type BudgetClaim } from './answer-budget';
import { CallerShares, NO_SHARE, poolOf, type ShareWaitSignal } from './caller-shares';
import type { CallCancellation } from './call-cancellation';
import { warmUpToolServiceClient } from './client-warm-up';
import { applyOutputSchema, type OutputSchemaCheck } from './structured-output';
import {
  ToolServiceClient,
  type ToolServiceAnswer,
  type ToolServiceRequest,
} from './tool-service-client';

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The headers of `POST {baseEndpoint}/{toolName}` (contract §10).
 * @param sourceToken with mode tokenExchange: the token issued for this bundle
 *   (docs/operations.md §14 "Credentials towards sources"), sent as `Authorization: Bearer`; the
 *   caller's own is never sent in that mode
 */
export function buildToolRequestHeaders(
  incoming: IncomingHeaders,
  authorization: ResolvedAuthorization,
  sourceToken?: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
  };
  // The five caller headers go through unchanged; absent ones are not sent.
  for (const name of FORWARDED_CALLER_HEADERS) {
    const value = firstValue(incoming[name]);
    if (value !== undefined && value !== '') headers[name] = value;
  }
  const value = callerAuthorization(authorization, incoming.authorization, sourceToken);
  if (value !== undefined) headers.authorization = value;
  return headers;
}

/**
 * The POST to the Tool Service in a CLIENT span (docs/operations.md §3 "Traces"), with the
 * span's `traceparent`/`tracestate` among the request's headers, so the Tool Service's own
 * spans join the caller's trace.
 */
function tracedPost(
  client: ToolServiceClient,
  request: ToolServiceRequest,
  toolName: string,
  bundleId: string,
): Promise<ToolServiceAnswer | ToolCallFailure> {
  return inSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: () => {
        const url = new URL(request.path, request.origin);
        return {
          'http.request.method': 'POST',
          'url.full': url.href,
          ...serverAttributes(url),
          'gen_ai.tool.name': toolName,
          'mcp_gateway.source.id': bundleId,
          'mcp_gateway.source.kind': 'bundle',
        };
      },
    },
    async (span) => {
      const answer = await client.post({
        ...request,
        headers: { ...request.headers, ...traceCarrier() },
      });
      if ('kind' in answer) failSpan(answer.kind);
      else {
        span.setAttribute('http.response.status_code', answer.status);
        // a CLIENT span's 4xx is an error too (OpenTelemetry HTTP semantic conventions)
        if (answer.status >= 400) failSpan(String(answer.status));
      }
      return answer;
    },
  );
}

/** Where a bundle's calls go: baseEndpoint split once into origin and path. */
interface Target {
  readonly origin: string;
  readonly basePath: string;
}

function statusClassOf(status: number | undefined): ToolServiceStatusClass {
  return `${Math.min(5, Math.floor((status ?? 500) / 100))}xx` as ToolServiceStatusClass;
}

/** How a call ended, for the metrics: its outcome and the Tool Service's status class. */
function classifyOutcome(
  result: CallToolResult,
  status: number | undefined,
  failure: ToolCallFailure | undefined,
): [ToolCallOutcome, ToolServiceStatusClass] {
  switch (failure?.kind) {
    case undefined:
      return [result.isError ? 'tool_error' : 'success', statusClassOf(status)];
    case 'undecodable':
      return ['tool_error', statusClassOf(status)];
    case 'timeout':
      return ['timeout', 'timeout'];
    case 'too-large':
      return ['too_large', 'too_large'];
    case 'connect':
      return ['unreachable', 'connect_error'];
    case 'invalid-answer':
      return ['invalid_answer', 'invalid_answer'];
    case 'too-deep':
      return ['tool_error', '2xx'];
    case 'busy':
      return ['busy', 'busy'];
    case 'cancelled':
      return ['cancelled', 'cancelled'];
    case 'shutdown':
      return ['shutdown', 'shutdown'];
  }
}

/**
 * Executes bundle tools: `POST {baseEndpoint}/{toolName}` with the call's arguments as the
 * JSON body, byte for byte (contract §10). Connections are kept alive; each call is bounded
 * by the tool's effective timeoutMillis and is never retried (a timeout may hide a side
 * effect; B17). Every outcome is a CallToolResult: failures are `isError` results whose
 * text names the status or cause but never an internal address.
 */
@Injectable()
export class ToolExecutor implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Execution');
  private readonly client: ToolServiceClient;
  private readonly maxResponseBytes: number;
  private readonly maxErrorChars: number;
  private readonly targets = new Map<string, Target>();
  private readonly budget: AnswerBudget;
  private readonly maxCallsPerBundle: number;
  /** Calls running per bundle id (execution.maxConcurrentCallsPerBundle). */
  private readonly running = new Map<string, number>();
  /** Calls running per bundle and caller (execution.maxConcurrentCallsPerCaller). */
  private readonly shares: CallerShares;
  /** The start-up warm-up of the client (onModuleInit), awaited before the listeners open. */
  private warmedUp?: Promise<void>;
  /** Successful calls are logged at debug level only: an info line per call would double its cost. */
  private readonly logSuccess: boolean;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional()
    @Inject(SourceCredentials)
    private readonly credentials: SourceCredentials | null = null,
    @Optional() @Inject(AnswerBudget) budget: AnswerBudget | null = null,
    @Optional() @Inject(CallerShares) shares: CallerShares | null = null,
  ) {
    const { execution } = config.mcp;
    this.shares = shares ?? CallerShares.of(config);
    this.client = new ToolServiceClient(
      config.mcp.discovery.connectTimeoutMillis,
      execution.maxConnectionsPerOrigin,
    );
    this.budget = budget ?? AnswerBudget.of(config);
    this.maxCallsPerBundle = execution.maxConcurrentCallsPerBundle;
    this.maxResponseBytes = config.mcp.execution.maxResponseBytes;
    this.maxErrorChars = config.mcp.execution.maxErrorTextChars;
    this.logSuccess = config.logLevel === 'debug' || config.logLevel === 'trace';
  }

  /**
   * Calls a bundle tool.
   * @param rawArguments the JSON text of tools/call `params.arguments`, unchanged ("{}" when absent)
   * @param incoming the agent's request headers (the five caller headers and Authorization are read)
   * @param outputCheck the tool's compiled outputSchema, when it declares one: a conforming JSON
   *   object answer becomes `structuredContent`, anything else an isError result
   * @param signal aborted when nobody waits for the result any more (the client went away or
   *   sent notifications/cancelled), or with reason `'shutdown'` when the grace period is over:
   *   the Tool Service request is cut and the result says why
   * @returns the result; never throws for anything the Tool Service or the network does. Over
   *   execution.maxConcurrentCallsPerBundle or maxInFlightAnswerBytes it is a prompt isError
   *   "the gateway is busy"; past the caller's own share of the origin's connections
   *   (maxConcurrentCallsPerCaller, CallerShares) it waits, and one that waited out its timeout
   *   is an isError "not sent: …".
   * @param caller the authenticated caller (docs/operations.md §13): its token is what a bundle
   *   with authorization mode tokenExchange gets exchanged; when that fails, an isError result
   *   says so
   */
  async call(
    tool: BundleCallTarget,
    rawArguments: string,
    incoming: IncomingHeaders,
    outputCheck?: OutputSchemaCheck,
    signal?: CallCancellation,
    caller?: CallerIdentity,
  ): Promise<CallToolResult> {
    const { bundle } = tool.route;
    const refuse = (failure: ToolCallFailure): CallToolResult => {
      const result = mapToolFailure(tool.name, failure, 0);
      this.record(tool, result, undefined, failure, 0, incoming);
      return result;
    };
    if ((this.running.get(bundle.id) ?? 0) >= this.maxCallsPerBundle) return refuse(CALLS_BUSY);
    // one caller's calls take at most its share of the bundle's slots and connections: past it
    // this one waits for one of the caller's own to end, within the tool's timeout
    const started = performance.now();
    const taken =
      caller === undefined
        ? NO_SHARE
        : this.shares.acquire(
            poolOf('bundle', bundle.baseEndpoint),
            caller,
            tool.timeoutMillis,
            waitSignal(signal),
          );
    const waited = taken instanceof Promise;
    const share = waited ? await taken : taken;
    if (share === undefined)
      return refuse(
        signal?.aborted === true
          ? { kind: 'cancelled' }
          : {
              kind: 'busy',
              limit: 'caller',
              share: this.shares.perCaller,
              waitedMs: Math.round(performance.now() - started),
            },
      );
    // read again after a wait: others may have started meanwhile
    if (waited && (this.running.get(bundle.id) ?? 0) >= this.maxCallsPerBundle) {
      share();
      return refuse(CALLS_BUSY);
    }
    this.running.set(bundle.id, (this.running.get(bundle.id) ?? 0) + 1);
    // the wait was part of the call's time
    const target = waited
      ? {
          ...tool,
          timeoutMillis: Math.max(
            1,
            Math.round(tool.timeoutMillis - (performance.now() - started)),
          ),
        }
      : tool;
    const claim: BudgetClaim = { bytes: 0, caller: callerName(caller) };
    try {
      return await this.execute(target, rawArguments, incoming, outputCheck, signal, claim, caller);
    } finally {
      share();
      this.budget.release(claim);
      const left = (this.running.get(bundle.id) ?? 1) - 1;
      if (left === 0) this.running.delete(bundle.id);
      else this.running.set(bundle.id, left);
    }
  }

  private async execute(
    tool: BundleCallTarget,
    rawArguments: string,
    incoming: IncomingHeaders,
    outputCheck: OutputSchemaCheck | undefined,
    signal: CallCancellation | undefined,
    claim: BudgetClaim,
    caller: CallerIdentity | undefined,
  ): Promise<CallToolResult> {
    const { bundle } = tool.route;
    const target = this.targetOf(bundle.baseEndpoint);
    const started = performance.now();
    let sourceToken: string | undefined;
    if (bundle.authorization.mode === 'tokenExchange') {
      try {
        if (this.credentials === null)
          throw new SourceCredentialError('token exchange is not set up');
        sourceToken = await this.credentials.forCaller(bundle.authorization, caller);
      } catch (err) {
        return this.credentialFailure(tool, err, performance.now() - started, incoming);
      }
    }
    const request: ToolServiceRequest = {
      origin: target.origin,
      path: `${target.basePath}/${tool.name}`,
      headers: buildToolRequestHeaders(incoming, bundle.authorization, sourceToken),
      body: rawArguments,
      timeoutMillis: tool.timeoutMillis,
      maxResponseBytes: this.maxResponseBytes,
      signal,
      budget: { pool: this.budget, claim },
      maxJsonDepth: MAX_ANSWER_DEPTH,
    };
    const answer = tracedHere()
      ? await tracedPost(this.client, request, tool.name, bundle.id)
      : await this.client.post(request);
    const elapsedMs = performance.now() - started;
    let result: CallToolResult;
    if ('kind' in answer) {
      result = mapToolFailure(tool.name, answer, Math.round(elapsedMs));
      this.record(tool, result, undefined, answer, elapsedMs, incoming);
    } else {
      // the hot path (no Content-Encoding) stays synchronous: no zlib, no extra promise
      const text =
        answer.contentEncoding === undefined
          ? answerText(answer.body, answer.contentType)
          : await decodeAnswer(
              answer.body,
              answer.contentType,
              answer.contentEncoding,
              this.maxResponseBytes,
            );
      if (typeof text !== 'string') {
        result = mapToolFailure(tool.name, text, Math.round(elapsedMs));
        this.record(tool, result, answer.status, text, elapsedMs, incoming);
      } else {
        const response = this.responseOf(answer, text);
        result = mapToolResponse(
          tool.name,
          response,
          Math.round(elapsedMs),
          this.maxErrorChars,
          bundle.serverErrorBody,
        );
        if (outputCheck !== undefined)
          result = applyOutputSchema(tool.name, result, response, outputCheck);
        this.record(tool, result, answer.status, undefined, elapsedMs, incoming);
      }
    }
    return result;
  }

  /**
   * No token for the bundle (docs/operations.md §14 "Credentials towards sources"): an isError
   * result naming why, never a token.
   */
  private credentialFailure(
    tool: BundleCallTarget,
    err: unknown,
    elapsedMs: number,
    incoming: IncomingHeaders,
  ): CallToolResult {
    const reason =
      err instanceof SourceCredentialError ? err.message : 'the credential could not be obtained';
    const result: CallToolResult = {
      content: [
        {
          type: 'text',
          text: `Tool ${tool.name} failed: the gateway could not obtain a credential for bundle ${tool.sourceId} (${reason})`,
          _meta: { searchTime: Math.round(elapsedMs) },
        },
      ],
      isError: true,
    };
    this.metrics?.toolCall(
      tool.name,
      tool.sourceId,
      'credential_error',
      'credential_error',
      elapsedMs / 1000,
    );
    this.logger.warn({
      msg: 'tools/call',
      requestId: loggedCallerText(incoming['x-request-id']),
      guid: loggedCallerText(incoming.guid),
      tool: tool.name,
      bundle: tool.sourceId,
      outcome: 'credential_error',
      reason,
    });
    return result;
  }

  private responseOf(answer: ToolServiceAnswer, body: string): ToolHttpResponse {
    const { status, contentType } = answer;
    if (answer.retryAfter === undefined) return { status, contentType, body };
    return {
      status,
      contentType,
      body,
      retryAfter: parseRetryAfter(answer.retryAfter, Date.now()),
    };
  }

  /**
   * Before the listeners open, the HTTP path to Tool Services is run once on a loopback server
   * of its own (see warmUpToolServiceClient), so that the first tools/calls do not stall the
   * event loop compiling it. Started here, before any module's bootstrap hook (discovery's
   * first pull runs alongside), and awaited in onApplicationBootstrap.
   */
  onModuleInit(): void {
    this.warmedUp = warmUpToolServiceClient().then(({ calls, elapsedMs, completed }) =>
      this.logger.debug(
        `Tool Service client warmed up: ${calls} calls in ${elapsedMs.toFixed(0)} ms${completed ? '' : ' (gave up at the deadline)'}`,
      ),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.warmedUp;
  }

  /** Runs after the /mcp listener has drained: a call still running here has lost its client. */
  async onModuleDestroy(): Promise<void> {
    await this.client.destroy();
  }

  private targetOf(baseEndpoint: string): Target {
    let target = this.targets.get(baseEndpoint);
    if (target === undefined) {
      const url = new URL(baseEndpoint);
      target = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
      this.targets.set(baseEndpoint, target);
    }
    return target;
  }

  /**
   * Metrics for every call; a log line for every failure (warn) and, at debug level, for
   * every success. Lines carry the request id and guid; never headers or arguments.
   */
  private record(
    tool: BundleCallTarget,
    result: CallToolResult,
    status: number | undefined,
    failure: ToolCallFailure | undefined,
    elapsedMs: number,
    incoming: IncomingHeaders,
  ): void {
    const [outcome, statusClass] = classifyOutcome(result, status, failure);
    this.metrics?.toolCall(tool.name, tool.sourceId, outcome, statusClass, elapsedMs / 1000);
    if (outcome === 'success' && !this.logSuccess) return;
    const line = {
      msg: 'tools/call',
      requestId: loggedCallerText(incoming['x-request-id']),
      guid: loggedCallerText(incoming.guid),
      tool: tool.name,
      bundle: tool.sourceId,
      outcome,
      status: status ?? null,
      durationMs: Math.round(elapsedMs * 10) / 10,
    };
    if (outcome === 'success') this.logger.debug(line);
    else this.logger.warn(line);
  }
}

const CALLS_BUSY: ToolCallFailure = { kind: 'busy', limit: 'calls' };

/** The call's cancellation as a wait for a share sees it (its one listener, until execute sets its own). */
function waitSignal(signal: CallCancellation | undefined): ShareWaitSignal | undefined {
  if (signal === undefined) return undefined;
  return {
    get aborted() {
      return signal.aborted;
    },
    addEventListener: (_type, listener) => signal.onAbort(listener),
    removeEventListener: () => signal.onAbort(undefined),
  };
}
