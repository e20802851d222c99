/**
 * The 2026 request-metadata headers (wire notes §1.2, SEP-2243): `Mcp-Method`, `Mcp-Name`, and
 * how a value that is not a safe plain-ASCII field value travels.
 */

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';

/**
 * True when `value` cannot go as a plain HTTP field value: empty, leading or trailing
 * whitespace (field parsing strips it), a character outside 0x20–0x7E other than tab, or a
 * value that already looks like the base64 sentinel (the spec's "avoid ambiguity" rule).
 * Same rule as the v2 SDK client.
 */
function needsBase64(value: string): boolean {
  if (value.length === 0) return true;
  if (value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) return true;
  if (value !== value.trim()) return true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 9 && (c < 0x20 || c > 0x7e)) return true;
  }
  return false;
}

/**
 * A header value as sent: `value` itself when it is safe plain ASCII, otherwise
 * `=?base64?{canonical padded base64 of its UTF-8}?=` (e.g. `"Zürich "` →
 * `=?base64?WsO8cmljaCA=?=`).
 */
export function encodeHeaderValue(value: string): string {
  if (!needsBase64(value)) return value;
  return `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** Which `params` field `Mcp-Name` mirrors, per method (the v2 SDK's table). */
const MCP_NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * The `Mcp-Name` value for a request, encoded: `params.name` (tools/call, prompts/get),
 * `params.uri` (resources/read) or `params.taskId` (tasks/get|update|cancel); undefined for
 * other methods, or when that field is not a string.
 */
export function mcpNameHeader(
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const field = MCP_NAME_SOURCE[method];
  if (field === undefined) return undefined;
  const value = params?.[field];
  return typeof value === 'string' ? encodeHeaderValue(value) : undefined;
}
