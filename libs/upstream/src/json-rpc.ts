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

/** A JSON-RPC message and, for a response whose `result` could be cut out of it exactly, that member's text. */
export interface ParsedMessage {
  readonly message: JsonRpcMessage;
  /** The text of `result` exactly as the message holds it (see parseReply). */
  readonly resultText?: string;
}

/** The tail of a response written result first, as the v1 SDKs do: `,"jsonrpc":"2.0","id":1}`. */
const RESULT_FIRST_HEAD = '{"result":';
const RESULT_FIRST_TAIL = ',"jsonrpc":"2.0","id":';
/** The head of a response written result last: `{"jsonrpc":"2.0","id":1,"result":`. */
const RESULT_LAST_HEAD = /^\{"jsonrpc":"2\.0","id":(-?\d{1,16}|"[^"\\]*"),"result":/;
/** An id as the tail may hold it: an integer, or a string without escapes (JSON.parse checks it). */
const PLAIN_ID = /^(?:-?\d{1,16}|"[^"\\]*")$/;

/**
 * One JSON-RPC message from text, like parseMessage; for a response in one of the two compact
 * layouts (`{"result":R,"jsonrpc":"2.0","id":I}` or `{"jsonrpc":"2.0","id":I,"result":R}`,
 * no whitespace around the envelope members) also the text of R, so that a result can be
 * passed on as the upstream wrote it instead of serialized again. Only R is parsed then: once
 * R is one valid JSON value, the text is exactly that three-member object, so the message is
 * the one JSON.parse would give. Anything else is parsed whole, without resultText.
 */
export function parseReply(text: string): ParsedMessage | undefined {
  let head: number | undefined;
  let end: number | undefined;
  let idText: string | undefined;
  let resultFirst = false;
  if (text.startsWith(RESULT_FIRST_HEAD) && text.endsWith('}')) {
    const tail = text.lastIndexOf(RESULT_FIRST_TAIL);
    if (tail > RESULT_FIRST_HEAD.length) {
      idText = text.slice(tail + RESULT_FIRST_TAIL.length, -1);
      if (PLAIN_ID.test(idText)) {
        head = RESULT_FIRST_HEAD.length;
        end = tail;
        resultFirst = true;
      }
    }
  } else if (text.endsWith('}')) {
    const match = RESULT_LAST_HEAD.exec(text);
    if (match !== null) {
      idText = match[1];
      head = match[0].length;
      end = text.length - 1;
    }
  }
  if (head !== undefined && end !== undefined && idText !== undefined) {
    const resultText = text.slice(head, end);
    let parsed: { result: unknown; id: unknown } | undefined;
    try {
      parsed = { result: JSON.parse(resultText), id: JSON.parse(idText) };
    } catch {
      parsed = undefined; // not one value each after all: read the whole text below
    }
    if (parsed !== undefined) {
      const { result, id } = parsed;
      const message = resultFirst ? { result, jsonrpc: '2.0', id } : { jsonrpc: '2.0', id, result };
      return { message, resultText };
    }
  }
  const message = parseMessage(text);
  return message === undefined ? undefined : { message };
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
 * A response as the caller's answer: the result object (with its text as the upstream wrote
 * it, when parseReply could cut it out), or the error with code, message and data unchanged. Undefined when it is neither (a non-object result, a malformed error).
 */
export function answerOf(message: JsonRpcMessage, resultText?: string): UpstreamAnswer | undefined {
  if ('error' in message) {
    const error = errorOf(message);
    return error === undefined ? undefined : { kind: 'error', ...error };
  }
  if (!isRecord(message.result)) return undefined;
  return resultText === undefined
    ? { kind: 'result', result: message.result }
    : { kind: 'result', result: message.result, resultText };
}
