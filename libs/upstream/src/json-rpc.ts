import type { JsonRpcMessage, UpstreamAnswer } from './upstream-types';

/** A JSON-RPC id as the gateway sends them: its own counter, or a probe's string. */
export type RequestId = number | string;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One JSON-RPC message from text; undefined for anything else (bad JSON, arrays, no `jsonrpc`). */
export function parseMessage(text: string): JsonRpcMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isRecord(value) && value.jsonrpc === '2.0' ? value : undefined;
}

/** A response (not a request or notification): it has `result` or `error` and no `method`. */
export function isResponse(message: JsonRpcMessage): boolean {
  return message.method === undefined && ('result' in message || 'error' in message);
}

/**
 * Whether `message` is the response to request `id`. An error response with a null id counts
 * too: that is how transports answer a request they could not attribute (e.g. v1's
 * `400 -32000 No valid session ID`, id null).
 */
export function isResponseTo(message: JsonRpcMessage, id: RequestId): boolean {
  if (!isResponse(message)) return false;
  return message.id === id || (message.id === null && 'error' in message);
}

/** A JSON-RPC error object's fields, when well formed (integer code). */
export interface JsonRpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export function errorOf(message: JsonRpcMessage): JsonRpcError | undefined {
  const error = message.error;
  if (!isRecord(error) || typeof error.code !== 'number' || !Number.isInteger(error.code)) {
    return undefined;
  }
  const text = typeof error.message === 'string' ? error.message : '';
  return 'data' in error
    ? { code: error.code, message: text, data: error.data }
    : { code: error.code, message: text };
}

/**
 * A response as the caller's answer: the result object, or the error with code, message and
 * data unchanged. Undefined when it is neither (a non-object result, a malformed error).
 */
export function answerOf(message: JsonRpcMessage): UpstreamAnswer | undefined {
  if ('error' in message) {
    const error = errorOf(message);
    return error === undefined ? undefined : { kind: 'error', ...error };
  }
  return isRecord(message.result) ? { kind: 'result', result: message.result } : undefined;
}
