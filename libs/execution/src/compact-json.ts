/** Above this many characters the byte-level pass is cheaper than building the string in slices. */
const LARGE = 64 * 1024;

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Small texts: copy the runs between insignificant whitespace. */
function compactSmall(text: string): string {
  const parts: string[] = [];
  let runStart = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
    } else if (isJsonSpace(c)) {
      if (i > runStart) parts.push(text.slice(runStart, i));
      runStart = i + 1;
    }
  }
  parts.push(text.slice(runStart));
  return parts.join('');
}

/**
 * Large texts: one pass over the UTF-8 bytes into one buffer. Multi-byte UTF-8 sequences
 * never contain bytes below 0x80, so quotes, backslashes and spaces are found safely.
 */
function compactLarge(text: string): string {
  const src = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let j = 0;
  let inString = false;
  for (let i = 0; i < src.length; i++) {
    const b = src[i] as number;
    if (inString) {
      out[j++] = b;
      if (b === 0x5c) out[j++] = src[++i] as number;
      else if (b === 0x22) inString = false;
      continue;
    }
    if (isJsonSpace(b)) continue;
    if (b === 0x22) inString = true;
    out[j++] = b;
  }
  return out.toString('utf8', 0, j);
}

/**
 * Removes insignificant whitespace from JSON text that is already known to be valid, without
 * parsing it into values: key order, number spelling (big integers, 1.0, 1e3) and escape
 * sequences stay exactly as the Tool Service wrote them (contract §10: "compact JSON").
 * Linear in the input, also for an 8 MB answer made mostly of separators.
 */
export function compactJson(validJson: string): string {
  // Fast path: machine-written JSON usually has nothing to strip.
  if (!/[ \n\r\t]/.test(validJson)) return validJson;
  return validJson.length > LARGE ? compactLarge(validJson) : compactSmall(validJson);
}
