import { callerName, callerSubject } from '@app/identity';
import {
  callerContext,
  failSpan,
  inSpan,
  pastSpan,
  SpanKind,
  type Attributes,
  type Span,
} from '@app/observability';
import type { HttpAnswer, HttpExchange } from '../answers/http-answer';
import type { FrameSource } from '../answers/sse-frame';
import type { InboundMessage } from '../jsonrpc/jsonrpc.types';

/** When a traced request reached the gateway, and when its caller's token was checked. */
export interface RequestTiming {
  /** ms since the epoch (sub-millisecond). */
  readonly started: number;
  /** Absent when auth is off; the same clock. */
  readonly authEnded?: number;
  /** The gateway sampled this request's trace already (it has no caller context). */
  readonly rootSampled: boolean;
}

/** ms since the epoch, sub-millisecond: the clock spans are stamped with. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value.slice(0, 200) : undefined;

/** The JSON-RPC error code of an answer written whole, read from its first bytes. */
function errorCodeOf(answer: HttpAnswer, idLength: number): number | undefined {
  if (typeof answer.body !== 'string') return undefined;
  // the gateway writes {"jsonrpc":"2.0","id":…,"error":{"code":…: the error follows the id,
  // however long the caller's id is
  const match = /"error":\{"code":(-?\d+)/.exec(answer.body.slice(0, 256 + idLength));
  return match === null ? undefined : Number(match[1]);
}

/**
 * One SERVER span per MCP request (docs/operations.md §3 "Traces"), named and labelled after
 * the OpenTelemetry semantic conventions for MCP: `{mcp.method.name} {target}`, the method, the
 * tool (`gen_ai.tool.name`) or prompt or resource, the JSON-RPC id, the protocol version, the
 * caller (`user.id`, where auth is on), and how it ended (HTTP status, the JSON-RPC error code
 * as `error.type`). Its parent is the caller's trace context, from the `traceparent` header or
 * `params._meta` (SEP-414). The token check, which ran before the body was read, is a child
 * span with the times it took.
 */
export function traceRequest(
  exchange: HttpExchange,
  parsed: { readonly message: InboundMessage; readonly value: unknown },
  era: { readonly modern: boolean; readonly version?: string },
  timing: RequestTiming,
  run: () => Promise<HttpAnswer>,
): Promise<HttpAnswer> {
  const { message, value } = parsed;
  const params = isRecord(value) && isRecord(value.params) ? value.params : undefined;
  // bounded: a caller's method, id and version reach the span (the SDK bounds attributes too)
  const method = 'method' in message ? message.method.slice(0, 128) : undefined;
  const target =
    method === 'tools/call' || method === 'prompts/get'
      ? text(params?.name)
      : method === 'resources/read'
        ? text(params?.uri)
        : undefined;
  const caller = exchange.caller;
  const attributes = (): Attributes => {
    const user = callerSubject(caller) ?? callerName(caller);
    return {
      'mcp.method.name': method ?? message.kind,
      'mcp.protocol.version': (era.version ?? (era.modern ? '2026-07-28' : '2025-11-25')).slice(
        0,
        64,
      ),
      'network.protocol.name': 'http',
      ...('id' in message && message.id !== null
        ? {
            'jsonrpc.request.id':
              typeof message.id === 'string'
                ? message.id.slice(0, 128)
                : JSON.stringify(message.id).slice(0, 128),
          }
        : {}),
      ...(method === 'tools/call' && target !== undefined
        ? { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' }
        : {}),
      ...(method === 'prompts/get' && target !== undefined ? { 'gen_ai.prompt.name': target } : {}),
      ...(method === 'resources/read' && target !== undefined
        ? { 'mcp.resource.uri': target }
        : {}),
      ...(user !== undefined ? { 'user.id': user } : {}),
    };
  };
  return inSpan(
    target === undefined ? (method ?? 'mcp') : `${method} ${target}`,
    {
      kind: SpanKind.SERVER,
      attributes,
      parent: callerContext(exchange.headers, params?._meta),
      rootSampled: timing.rootSampled,
      startTime: timing.started,
      // a call's SSE answer: the span lasts until its last frame (the audit's outcome and a
      // streamed error belong to it); a listen's stream is long-lived, its span ends at once
      endsLater: method !== 'subscriptions/listen',
    },
    async (span) => {
      // not sampled: nothing of this request is recorded
      if (!span.isRecording()) return run();
      if (timing.authEnded !== undefined)
        pastSpan('authenticate', timing.started, timing.authEnded, {
          'mcp_gateway.auth.outcome': caller === undefined ? 'anonymous' : 'authenticated',
        });
      const answer = await run();
      span.setAttribute('http.response.status_code', answer.status);
      if (answer.stream !== undefined && method !== 'subscriptions/listen')
        return { ...answer, stream: endingWith(answer.stream, span) };
      const id = 'id' in message ? message.id : undefined;
      const code = errorCodeOf(answer, typeof id === 'string' ? id.length * 6 + 2 : 32);
      if (code !== undefined) {
        span.setAttribute('rpc.response.status_code', String(code));
        // a JSON-RPC error is an error of the request (OpenTelemetry JSON-RPC conventions)
        failSpan(String(code), undefined, span);
      }
      span.end();
      return answer;
    },
  );
}

/**
 * The SERVER span of a POST answered before its body was read (docs/operations.md §3
 * "Traces"): refused at the token check (401/403, whose body is never read: its method and
 * id are unknown) or for its media type (415). Named after the route, `POST /mcp`; its parent
 * is the caller's `traceparent` header; the token check is its child as on any request.
 */
export function traceUnread(
  exchange: HttpExchange,
  timing: RequestTiming,
  answer: HttpAnswer,
  refused: boolean,
): Promise<HttpAnswer> {
  const caller = exchange.caller;
  return inSpan(
    'POST /mcp',
    {
      kind: SpanKind.SERVER,
      attributes: () => {
        const user = refused ? undefined : (callerSubject(caller) ?? callerName(caller));
        return {
          'http.request.method': 'POST',
          'network.protocol.name': 'http',
          'http.response.status_code': answer.status,
          'error.type': String(answer.status),
          ...(user !== undefined ? { 'user.id': user } : {}),
        };
      },
      parent: callerContext(exchange.headers, undefined),
      rootSampled: timing.rootSampled,
      startTime: timing.started,
    },
    (span) => {
      if (span.isRecording() && timing.authEnded !== undefined)
        pastSpan('authenticate', timing.started, timing.authEnded, {
          'mcp_gateway.auth.outcome': refused
            ? 'refused'
            : caller === undefined
              ? 'anonymous'
              : 'authenticated',
        });
      return Promise.resolve(answer);
    },
  );
}

/** The answer's own JSON-RPC error at the start of a frame: `{"jsonrpc":"2.0","id":…,"error":{"code":…`. */
const RESPONSE_ERROR =
  /^\{"jsonrpc":"2\.0","id":(?:"(?:[^"\\]|\\.)*"|[^,]*),"error":\{"code":(-?\d+)/;

/**
 * A call's SSE answer whose request span ends with its last frame, marked with the answer's own
 * JSON-RPC error when the stream ends with one (the relayed messages before it are not answers).
 */
function endingWith(stream: FrameSource, span: Span): FrameSource {
  const frames: FrameSource = {
    async *[Symbol.asyncIterator]() {
      try {
        for await (const frame of stream) {
          if (typeof frame === 'string') {
            const code = RESPONSE_ERROR.exec(frame)?.[1];
            if (code !== undefined) {
              span.setAttribute('rpc.response.status_code', code);
              failSpan(code, undefined, span);
            }
          }
          yield frame;
        }
      } finally {
        span.end();
      }
    },
  };
  if (stream.onCut !== undefined) frames.onCut = (listener) => stream.onCut?.(listener);
  return frames;
}
