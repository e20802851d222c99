/**
 * How a 2026-07-28 request-metadata header value (`Mcp-Name`, `Mcp-Param-*`) that is not a
 * safe plain-ASCII field value travels: `=?base64?{canonical padded base64 of its UTF-8}?=`
 * (wire notes §1.2, G-3, in ../shared/reference; SEP-2243). Encoded by the client side toward
 * upstreams, decoded by the front door; one rule for both.
 */

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

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
 * A header value as sent: `value` itself when it is safe plain ASCII, otherwise the sentinel
 * (e.g. `"Zürich "` → `=?base64?WsO8cmljaCA=?=`).
 */
export function encodeHeaderValue(value: string): string {
  if (!needsBase64(value)) return value;
  return `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * A header value as text: the sentinel decoded (canonical, padded base64 of valid UTF-8 only),
 * any other value as it is — one that starts like the sentinel but lacks its `?=` end too
 * (SEP-2243 "Value Encoding": only a value with both is Base64). undefined for a malformed
 * sentinel (a -32020 header error).
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const m = SENTINEL.exec(value);
  if (m === null) return undefined;
  const b64 = m[1] ?? '';
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.toString('base64') !== b64) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
