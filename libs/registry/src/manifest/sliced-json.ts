import { TimeSlicer } from '../time-slicer';

/** Below this size one JSON.parse is cheaper than slicing. */
const SLICE_ABOVE = 256 * 1024;

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);

function skipWs(s: string, i: number): number {
  while (i < s.length && WS.has(s.charCodeAt(i))) i++;
  return i;
}

function fail(at: number): never {
  throw new SyntaxError(`Unexpected token in JSON at position ${at}`);
}

/** Index just past the string starting at i (a quote). */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return fail(i);
}

/** Index just past the value starting at i; its inside is checked later by JSON.parse. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) return stringEnd(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === 0x22) j = stringEnd(s, j) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return fail(i);
  }
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || WS.has(d)) break;
    j++;
  }
  return j > i ? j : fail(i);
}

async function parseArray(
  s: string,
  start: number,
  slicer: TimeSlicer,
): Promise<[unknown[], number]> {
  const out: unknown[] = [];
  let i = skipWs(s, start + 1);
  if (s.charCodeAt(i) === 0x5d) return [out, i + 1];
  for (;;) {
    await slicer.maybeYield();
    const end = valueEnd(s, i);
    out.push(JSON.parse(s.slice(i, end)));
    i = skipWs(s, end);
    const c = s.charCodeAt(i);
    if (c === 0x5d) return [out, i + 1];
    if (c !== 0x2c) fail(i);
    i = skipWs(s, i + 1);
  }
}

/**
 * JSON.parse for a large manifest without one long stall: the top-level object is read
 * member by member and top-level arrays (the tools) element by element, each element with
 * JSON.parse, yielding to the event loop between them. Accepts and rejects exactly what
 * JSON.parse does for a top-level object; throws SyntaxError like it. Small texts and any
 * other top-level value go to JSON.parse at once.
 */
export async function parseJsonSliced(text: string, slicer = new TimeSlicer()): Promise<unknown> {
  let i = skipWs(text, 0);
  if (text.length < SLICE_ABOVE || text.charCodeAt(i) !== 0x7b) return JSON.parse(text);
  const out: Record<string, unknown> = {};
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === 0x7d) {
    i++;
  } else {
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) fail(i);
      const keyEnd = stringEnd(text, i);
      const key = JSON.parse(text.slice(i, keyEnd)) as string;
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a) fail(i);
      i = skipWs(text, i + 1);
      let value: unknown;
      if (text.charCodeAt(i) === 0x5b) {
        [value, i] = await parseArray(text, i, slicer);
      } else {
        const end = valueEnd(text, i);
        value = JSON.parse(text.slice(i, end));
        i = end;
      }
      // Like JSON.parse: an own property even for "__proto__"; the last duplicate wins.
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      i = skipWs(text, i);
      const c = text.charCodeAt(i);
      if (c === 0x7d) {
        i++;
        break;
      }
      if (c !== 0x2c) fail(i);
      i = skipWs(text, i + 1);
    }
  }
  if (skipWs(text, i) !== text.length) fail(i);
  return out;
}
