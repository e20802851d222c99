import type { InboundMessage, JsonRpcId } from './jsonrpc.types';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Parses and classifies a POST body (JSON-RPC 2.0 as MCP uses it). Never throws. */
export function parseMessage(text: string): { message: InboundMessage; value: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { message: { kind: 'parse-error' }, value: undefined };
  }
  return { message: classifyMessage(value), value };
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
    return { kind: 'response', id };
  }
  return {
    kind: 'invalid-request',
    id,
    reason: 'not a JSON-RPC request, notification or response',
  };
}
