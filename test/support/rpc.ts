/** Raw JSON-RPC over HTTP, for the wire-level cases the SDK clients would hide. */
export const STANDARD_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body (or the JSON inside one SSE `data:` line); undefined when empty or not JSON. */
  readonly json: any;
}

export async function postRaw(
  url: string,
  body: string,
  headers: Record<string, string> = STANDARD_HEADERS,
): Promise<RawAnswer> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let json: any;
  const data = /^data: (.*)$/m.exec(text);
  try {
    json = text === '' ? undefined : JSON.parse(data ? data[1]! : text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function rpc(
  url: string,
  method: string,
  params?: Record<string, unknown>,
  headers: Record<string, string> = {},
  id: number | string = 1,
): Promise<RawAnswer> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
  return postRaw(url, body, { ...STANDARD_HEADERS, ...headers });
}

/** tools/call by raw JSON-RPC; resolves with the JSON-RPC response object. */
export async function callTool(
  url: string,
  name: string,
  args?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<any> {
  const answer = await rpc(
    url,
    'tools/call',
    { name, ...(args === undefined ? {} : { arguments: args }) },
    headers,
  );
  return answer.json;
}

/**
 * Opens a 2025-11-25 session on `url` with `headers` (e.g. a caller's Authorization) and
 * returns the headers every later request of it carries: those, `Mcp-Session-Id` and
 * `MCP-Protocol-Version`. Throws when the gateway opens none.
 */
export async function openLegacySession(
  url: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const opened = await rpc(
    url,
    'initialize',
    { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    headers,
  );
  const sessionId = opened.headers.get('mcp-session-id');
  if (opened.status !== 200 || sessionId === null)
    throw new Error(`initialize on ${url}: ${opened.status} ${opened.text.slice(0, 300)}`);
  return { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
}
