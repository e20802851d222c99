const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index just past the string whose opening quote is at `at`; -1 when it never closes. */
function stringEnd(text: string, at: number): number {
  for (let from = at + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The value of the JSON string token text[at, end): escapes decoded (`"\u0074ools"` is `tools`). */
function stringValue(text: string, at: number, end: number): string | undefined {
  const inner = text.slice(at + 1, end - 1);
  if (!inner.includes('\\')) return inner;
  try {
    return JSON.parse(text.slice(at, end)) as string;
  } catch {
    return undefined;
  }
}

/**
 * Whether the JSON-RPC message `text` holds, as `result.<key>`, an array of more than `limit`
 * items, found without parsing it: one forward scan that skips strings with indexOf and counts
 * the array's top-level commas, and stops as soon as the count passes `limit` (a 40,000-tool
 * list is refused after its first `limit` tools). Every `<key>` member of `result` counts (a
 * repeated member cannot hide a long array behind a short one). Text that is not JSON is not
 * this function's to judge: false, and the parser refuses it.
 */
export function listItemsExceed(text: string, key: string, limit: number): boolean {
  return listItemCount(text, key, limit) > limit;
}

/**
 * The items of the longest `result.<key>` array of the JSON-RPC message `text`, counted as
 * listItemsExceed counts them, and no further than `limit` + 1 (the scan stops there).
 */
export function listItemCount(text: string, key: string, limit: number): number {
  let longest = 0;
  let depth = 0;
  /** The member key read last at depth 1 (the message) and depth 2 (its result). */
  let messageKey: string | undefined;
  let resultKey: string | undefined;
  let inResult = false;
  let counting = false;
  let awaitingFirst = false;
  let count = 0;
  const item = (): boolean => {
    count++;
    awaitingFirst = false;
    if (count > longest) longest = count;
    return count > limit;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return longest;
      if (counting && depth === 3 && awaitingFirst && item()) return longest;
      if (depth === 1 || depth === 2) {
        let next = end;
        while (isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) === COLON) {
          const name = stringValue(text, i, end);
          if (depth === 1) messageKey = name;
          else resultKey = name;
        }
      }
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (counting && depth === 3 && awaitingFirst && item()) return longest;
      depth++;
      if (depth === 2) inResult = c === OPEN_OBJECT && messageKey === 'result';
      else if (depth === 3) {
        counting = inResult && c === OPEN_ARRAY && resultKey === key;
        awaitingFirst = counting;
        count = 0;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 3) counting = false;
      else if (depth === 2) inResult = false;
      depth--;
    } else if (counting && depth === 3) {
      if (c === COMMA) {
        if (item()) return longest;
      } else if (awaitingFirst && !isSpace(c) && item()) return longest;
    }
  }
  return longest;
}

/** Keys longer than this are never `result` or a list's key: not collected further. */
const KEY_CAPTURE_LIMIT = 32;

/**
 * listItemsExceed over an answer's bytes as they arrive (a JSON body, or the raw bytes of an
 * SSE stream, whose field names sit outside any JSON string), so a list that passes the limit
 * is cut after its first `limit` items instead of being received whole. Quotes, backslashes,
 * brackets, commas and colons are ASCII, so raw UTF-8 is scanned safely. A key written with
 * escapes is not recognised here: listItemsExceed, run on the complete text before it is
 * parsed, is the exact check; this one only ends the common case early.
 */
export class ListItemCounter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The string being read at depth 1 or 2 (it may be a key); undefined elsewhere. */
  private capture: string | undefined;
  /** A string just read at depth 1 or 2: a key when a colon follows. */
  private pendingKey: string | undefined;
  private messageKey: string | undefined;
  private resultKey: string | undefined;
  private inResult = false;
  private counting = false;
  private awaitingFirst = false;
  private count = 0;

  constructor(
    private readonly key: string,
    private readonly limit: number,
  ) {}

  /** Scans the next chunk; true as soon as the list has more than `limit` items. */
  exceeds(chunk: Uint8Array): boolean {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          if (this.capture !== undefined) this.capture += '\\';
        } else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          this.pendingKey = this.capture;
          this.capture = undefined;
        } else if (this.capture !== undefined && this.capture.length < KEY_CAPTURE_LIMIT)
          this.capture += String.fromCharCode(b);
        continue;
      }
      if (isSpace(b)) continue;
      if (this.pendingKey !== undefined) {
        const name = this.pendingKey;
        this.pendingKey = undefined;
        if (b === COLON) {
          if (this.depth === 1) this.messageKey = name;
          else if (this.depth === 2) this.resultKey = name;
          continue;
        }
      }
      if (b === QUOTE) {
        if (this.counting && this.depth === 3 && this.awaitingFirst && this.item()) return true;
        this.inString = true;
        this.capture = this.depth === 1 || this.depth === 2 ? '' : undefined;
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (this.counting && this.depth === 3 && this.awaitingFirst && this.item()) return true;
        this.depth++;
        if (this.depth === 2) this.inResult = b === OPEN_OBJECT && this.messageKey === 'result';
        else if (this.depth === 3) {
          this.counting = this.inResult && b === OPEN_ARRAY && this.resultKey === this.key;
          this.awaitingFirst = this.counting;
          this.count = 0;
        }
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (this.depth === 3) this.counting = false;
        else if (this.depth === 2) this.inResult = false;
        if (this.depth > 0) this.depth--;
      } else if (this.counting && this.depth === 3) {
        if (b === COMMA) {
          if (this.item()) return true;
        } else if (this.awaitingFirst && this.item()) return true;
      }
    }
    return false;
  }

  private item(): boolean {
    this.count++;
    this.awaitingFirst = false;
    return this.count > this.limit;
  }
}
