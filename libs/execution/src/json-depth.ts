/**
 * true when the text nests deeper than `limit`, found by a scan that never recurses; short
 * texts cannot and are not scanned (the hot path pays nothing for small requests).
 */
export function textDepthExceeds(text: string, limit: number): boolean {
  if (text.length <= limit * 2) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
