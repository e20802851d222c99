/**
 * Whether `text` holds at most `limit` opening brackets (`{` and `[`, inside strings too),
 * counted with indexOf, a native scan: a text that does cannot nest deeper than `limit`.
 */
function fewOpenings(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1))
      if (++count > limit) return false;
  }
  return true;
}

/**
 * true when the text nests deeper than `limit`, found by a scan that never recurses. Texts
 * too short to nest that deep, or with no more than `limit` opening brackets in all (every
 * ordinary request and answer), are not scanned character by character.
 */
export function textDepthExceeds(text: string, limit: number): boolean {
  if (text.length <= limit * 2 || fewOpenings(text, limit)) return false;
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

/**
 * Most JSON values the gateway parses out of one answer it did not write (an upstream's
 * message, a Tool Service answer checked against an outputSchema): parsed, 250,000 values take
 * ~35 MB and ~50 ms of the event loop; the 8 MiB byte cap alone allows ten times that.
 */
export const MAX_PARSED_VALUES = 250_000;

/**
 * true when a JSON text holds more than `limit` values, counted as its commas and opening
 * brackets outside strings (each value but the first of a container follows a comma; each
 * container opens once). A parsed value costs the heap far more than its text: 2.6 million
 * `{}` in 7.8 MB took ~340 MB and half a second of the event loop to parse. A text shorter than
 * twice the limit cannot hold that many (a value and its separator take two characters at
 * least) and is not scanned.
 */
export function textValuesExceed(text: string, limit: number = MAX_PARSED_VALUES): boolean {
  if (text.length < limit * 2) return false;
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x2c || c === 0x7b || c === 0x5b) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/**
 * The nesting depth of JSON bytes fed chunk by chunk (never recursing, never decoding):
 * quotes, backslashes and brackets are ASCII, and bytes of multi-byte UTF-8 sequences are
 * all >= 0x80, so they are found safely in raw bytes. Lets an answer that nests too deep be
 * refused after its first bytes, before the rest is received, joined or decoded.
 */
export class JsonDepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** @param limit the deepest nesting allowed */
  constructor(private readonly limit: number) {}

  /** Scans the next chunk; true as soon as the nesting went deeper than the limit. */
  exceeds(chunk: Uint8Array): boolean {
    let { depth, inString, escaped } = this;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === 0x5c) escaped = true;
        else if (b === 0x22) inString = false;
      } else if (b === 0x22) {
        inString = true;
      } else if (b === 0x7b || b === 0x5b) {
        if (++depth > this.limit) return true;
      } else if (b === 0x7d || b === 0x5d) {
        depth--;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return false;
  }
}
