import { MAX_PARSED_VALUES, textDepthExceeds, textValuesExceed } from '@app/http-body';
import { extractRawMember } from './raw-member';
import { RawNumberId, type InboundMessage, type JsonRpcId } from './jsonrpc.types';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

export { textDepthExceeds };

/** Deepest nesting accepted in a request body; real MCP requests nest a few levels. */
export const MAX_REQUEST_DEPTH = 128;

/**
 * Parses and classifies a POST body (JSON-RPC 2.0 as MCP uses it). Never throws.
 * @param text the body decoded as UTF-8, or null when its bytes are not valid UTF-8
 */
export function parseMessage(text: string | null): { message: InboundMessage; value: unknown } {
  if (text === null) {
    return {
      message: { kind: 'parse-error', reason: 'the body is not valid UTF-8' },
      value: undefined,
    };
  }
  if (textDepthExceeds(text, MAX_REQUEST_DEPTH)) {
    // Refused before JSON.parse: a 4 MiB body of brackets would stall every other request.
    return {
      message: {
        kind: 'invalid-request',
        id: null,
        reason: `the body nests deeper than ${MAX_REQUEST_DEPTH} levels`,
      },
      value: undefined,
    };
  }
  if (textValuesExceed(text, MAX_PARSED_VALUES)) {
    // Refused before JSON.parse too: 1.9 million values in 3.6 MB held the event loop 0.2 s
    // (1.2 s on a multi round-trip retry), within the 4 MiB body limit.
    return {
      message: {
        kind: 'invalid-request',
        id: null,
        reason: `the body holds more than ${MAX_PARSED_VALUES} JSON values`,
      },
      value: undefined,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      message: { kind: 'parse-error', reason: 'the body is not valid JSON' },
      value: undefined,
    };
  }
  const message = classifyMessage(value);
  // An id no JavaScript number holds exactly is answered with the client's own spelling.
  if ('id' in message && typeof message.id === 'number' && !Number.isSafeInteger(message.id)) {
    const raw = extractRawMember(text, ['id']);
    if (raw !== undefined) return { message: { ...message, id: new RawNumberId(raw) }, value };
  }
  return { message, value };
}

export function classifyMessage(value: unknown): InboundMessage {
  if (Array.isArray(value)) return { kind: 'batch' };
  if (!isRecord(value))
    return { kind: 'invalid-request', id: null, reason: 'the body must be a JSON-RPC object' };
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0')
    return { kind: 'invalid-request', id, reason: 'jsonrpc must be "2.0"' };
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method === '') {
      return { kind: 'invalid-request', id, reason: 'method must be a non-empty string' };
    }
    if (!('id' in value))
      return { kind: 'notification', method: value.method, params: value.params };
    if (!isId(value.id))
      return { kind: 'invalid-request', id: null, reason: 'id must be a string or a number' };
    if (value.params !== undefined && !isRecord(value.params)) {
      return {
        kind: 'invalid-params',
        id: value.id,
        method: value.method,
        reason: 'params must be an object',
      };
    }
    return { kind: 'request', id: value.id, method: value.method, params: value.params };
  }
  if (('result' in value || 'error' in value) && 'id' in value) {
    return { kind: 'response', id, message: value };
  }
  return {
    kind: 'invalid-request',
    id,
    reason: 'not a JSON-RPC request, notification or response',
  };
}
