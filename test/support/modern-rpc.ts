import { postRaw, type RawAnswer } from './rpc';
import { SseReader } from './sse-reader';

/** The 2026-07-28 revision. */
export const MODERN = '2026-07-28';

/** The `_meta` envelope of a 2026-07-28 request with these client capabilities. */
export function envelopeMeta(caps: object): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
}

/** The headers of a 2026-07-28 request of `method`; `name`: Mcp-Name; `token`: a bearer token. */
function modernHeaders(method: string, name: unknown, token?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
}

/**
 * A raw 2026-07-28 request: the envelope in `_meta`, the headers mirroring the body (Mcp-Name:
 * `params.taskId`, else `params.name`).
 */
export function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown>,
  caps: object,
  token?: string,
  id: string | number = 1,
): Promise<RawAnswer> {
  return postRaw(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      // `_meta` keys of the caller's own (a traceparent) beside the envelope
      params: {
        ...params,
        _meta: { ...(params._meta as object | undefined), ...envelopeMeta(caps) },
      },
    }),
    modernHeaders(method, params.taskId ?? params.name, token),
  );
}

/** A raw 2026-07-28 `subscriptions/listen` with this notifications filter. */
export function modernListen(
  url: string,
  id: string | number,
  notifications: object,
  caps: object,
  token?: string,
): Promise<SseReader> {
  return SseReader.open(
    url,
    'POST',
    modernHeaders('subscriptions/listen', undefined, token),
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications, _meta: envelopeMeta(caps) },
    }),
  );
}
