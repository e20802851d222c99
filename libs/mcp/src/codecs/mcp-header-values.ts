/** `=?base64?<base64 of UTF-8>?=`: how a header value that is not plain ASCII travels (wire notes §1.2, G-3). */
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/**
 * A 2026-07-28 `Mcp-Name` / `Mcp-Param-*` header value as text: the base64 sentinel decoded
 * (canonical, padded base64 only), any other value as it is. undefined for a malformed
 * sentinel (a -32020 header error).
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith('=?base64?')) return value;
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
