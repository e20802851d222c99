import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import {
  GatewayMetrics,
  type ToolCallOutcome,
  type ToolServiceStatusClass,
} from '@app/observability';
import { Agent, errors as undiciErrors, request } from 'undici';
import { GATEWAY_CONFIG, type GatewayConfig, type ResolvedAuthorization } from '@app/config';
import type { CatalogTool } from '@app/registry';
import {
  FORWARDED_CALLER_HEADERS,
  type CallToolResult,
  type IncomingHeaders,
} from './call-tool-result';
import { mapToolFailure, mapToolResponse, type ToolCallFailure } from './map-tool-response';

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The headers of `POST {baseEndpoint}/{toolName}` (contract §10). */
export function buildToolRequestHeaders(
  incoming: IncomingHeaders,
  authorization: ResolvedAuthorization,
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
  switch (authorization.mode) {
    case 'none':
      break;
    case 'passthrough': {
      const value = firstValue(incoming.authorization);
      if (value !== undefined) headers.authorization = value;
      break;
    }
    case 'static':
      headers.authorization = authorization.value;
      break;
  }
  return headers;
}

const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

class ResponseTooLarge extends Error {}

/** How a call ended, for the metrics: its outcome and the Tool Service's status class. */
function classifyOutcome(
  result: CallToolResult,
  status: number | undefined,
  failure: ToolCallFailure | undefined,
): [ToolCallOutcome, ToolServiceStatusClass] {
  switch (failure?.kind) {
    case undefined:
      return [
        result.isError ? 'tool_error' : 'success',
        `${Math.min(5, Math.floor((status ?? 500) / 100))}xx` as ToolServiceStatusClass,
      ];
    case 'timeout':
      return ['timeout', 'timeout'];
    case 'too-large':
      return ['too_large', 'too_large'];
    case 'connect':
      return ['unreachable', 'connect_error'];
  }
}

const UTF8 = new TextDecoder('utf-8');

/**
 * Executes bundle tools: `POST {baseEndpoint}/{toolName}` with the call's arguments as the
 * JSON body, byte for byte (contract §10). Connections are kept alive; each call is bounded
 * by the tool's effective timeoutMillis and is never retried (a timeout may hide a side
 * effect; B17). Every outcome is a CallToolResult: failures are `isError` results whose
 * text names the status or cause but never an internal address.
 */
@Injectable()
export class ToolExecutor implements OnModuleDestroy {
  private readonly logger = new Logger('Execution');
  private readonly agent: Agent;
  private readonly maxResponseBytes: number;
  private readonly maxErrorChars: number;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.agent = new Agent({
      connect: { timeout: config.mcp.discovery.connectTimeoutMillis },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    });
    this.maxResponseBytes = config.mcp.execution.maxResponseBytes;
    this.maxErrorChars = config.mcp.execution.maxErrorTextChars;
  }

  /**
   * Calls a bundle tool.
   * @param rawArguments the JSON text of tools/call `params.arguments`, unchanged ("{}" when absent)
   * @param incoming the agent's request headers (the five caller headers and Authorization are read)
   * @returns the result; never throws for anything the Tool Service or the network does
   */
  async call(
    tool: CatalogTool,
    rawArguments: string,
    incoming: IncomingHeaders,
  ): Promise<CallToolResult> {
    const { bundle } = tool.route;
    const started = performance.now();
    const signal = AbortSignal.timeout(tool.timeoutMillis);
    let result: CallToolResult;
    let status: number | undefined;
    let failure: ToolCallFailure | undefined;
    try {
      const res = await request(`${bundle.baseEndpoint}/${tool.name}`, {
        method: 'POST',
        headers: buildToolRequestHeaders(incoming, bundle.authorization),
        body: rawArguments,
        dispatcher: this.agent,
        signal,
        headersTimeout: tool.timeoutMillis,
        bodyTimeout: tool.timeoutMillis,
      });
      status = res.statusCode;
      const body = await this.readBody(res.body);
      const contentType = firstValue(res.headers['content-type']) ?? '';
      result = mapToolResponse(
        tool.name,
        { status, contentType, body },
        Math.round(performance.now() - started),
        this.maxErrorChars,
      );
    } catch (err) {
      failure = this.classify(err, tool.timeoutMillis);
      result = mapToolFailure(tool.name, failure, Math.round(performance.now() - started));
    }
    this.record(tool, result, status, failure, performance.now() - started);
    return result;
  }

  /** One metrics update and one access-log line per call (never headers, never arguments). */
  private record(
    tool: CatalogTool,
    result: CallToolResult,
    status: number | undefined,
    failure: ToolCallFailure | undefined,
    elapsedMs: number,
  ): void {
    const [outcome, statusClass] = classifyOutcome(result, status, failure);
    this.metrics?.toolCall(tool.name, tool.sourceId, outcome, statusClass, elapsedMs / 1000);
    const line = {
      msg: 'tools/call',
      tool: tool.name,
      bundle: tool.sourceId,
      outcome,
      status: status ?? null,
      durationMs: Math.round(elapsedMs * 10) / 10,
    };
    if (outcome === 'success') this.logger.log(line);
    else this.logger.warn(line);
  }

  /**
   * Runs after the /mcp listener has drained (graceful shutdown): a call still running here
   * has lost its client to the grace period, so its connection is cut rather than awaited.
   */
  async onModuleDestroy(): Promise<void> {
    await this.agent.destroy();
  }

  private async readBody(
    body: NodeJS.ReadableStream & AsyncIterable<Buffer> & { destroy(): void },
  ): Promise<string> {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body) {
      total += chunk.length;
      if (total > this.maxResponseBytes) {
        // undici reports the abort as an 'error' event; unheard, it would crash the process.
        body.on('error', () => undefined);
        body.destroy();
        throw new ResponseTooLarge();
      }
      chunks.push(chunk);
    }
    // Decode once, after joining: a code point split across chunks stays whole (B22).
    // TextDecoder drops a leading UTF-8 BOM, which JSON.parse would refuse.
    return UTF8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
  }

  private classify(err: unknown, timeoutMillis: number): ToolCallFailure {
    if (err instanceof ResponseTooLarge)
      return { kind: 'too-large', maxBytes: this.maxResponseBytes };
    if (
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    ) {
      return { kind: 'timeout', timeoutMillis };
    }
    if (err instanceof undiciErrors.ConnectTimeoutError)
      return { kind: 'connect', code: 'connect timeout' };
    const code = (err as { code?: unknown } | null)?.code;
    return {
      kind: 'connect',
      code: typeof code === 'string' && CONNECT_ERROR_CODES.has(code) ? code : 'network error',
    };
  }
}
