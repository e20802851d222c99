const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWs(json: string, pos: number): number {
  while (pos < json.length && isWs(json.charCodeAt(pos))) pos++;
  return pos;
}

/**
 * The position just past the string whose opening quote is at `pos`. Jumps from quote to quote
 * with indexOf (a native scan) and counts the backslashes before each: a quote after an odd
 * number of them is escaped. Most of a request's text is inside strings, so this is where the
 * scan spends its time.
 */
function stringEnd(json: string, pos: number): number {
  let from = pos + 1;
  for (;;) {
    const quote = json.indexOf('"', from);
    if (quote === -1) return json.length;
    let before = quote - 1;
    while (before > pos && json.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The position just past the value that starts at `pos` (no whitespace before it). */
function valueEnd(json: string, pos: number): number {
  const first = json.charCodeAt(pos);
  if (first === QUOTE) return stringEnd(json, pos);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = pos; i < json.length; i++) {
      const c = json.charCodeAt(i);
      if (c === QUOTE) i = stringEnd(json, i) - 1;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return json.length;
  }
  // a number, true, false or null: up to the next delimiter
  let i = pos;
  for (; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isWs(c)) break;
  }
  return i;
}

/** Whether the member name whose quotes are at `start` and `end - 1` reads as `key`. */
function nameIs(json: string, start: number, end: number, key: string): boolean {
  for (let i = start + 1; i < end - 1; i++)
    if (json.charCodeAt(i) === BACKSLASH)
      return (JSON.parse(json.slice(start, end)) as string) === key;
  return end - start - 2 === key.length && json.startsWith(key, start + 1);
}

/** Where a scan of one object ended, and the range of the value it looked for (if found). */
interface ObjectScan {
  end: number;
  found: [number, number] | undefined;
}

/**
 * Scans the value that starts at `pos` (no whitespace before it) once: returns where it ends
 * and, when it is an object, the range of the value at `path[depth..]` inside it. A member on
 * the path is searched as it is crossed, so the text is read once whatever the path's length;
 * a later duplicate replaces what an earlier one found, even with nothing (as JSON.parse).
 */
function scanObject(json: string, pos: number, path: readonly string[], depth: number): ObjectScan {
  if (json.charCodeAt(pos) !== OPEN_BRACE) return { end: valueEnd(json, pos), found: undefined };
  const key = path[depth] as string;
  const last = depth === path.length - 1;
  let found: [number, number] | undefined;
  pos++;
  while (pos < json.length) {
    pos = skipWs(json, pos);
    if (json.charCodeAt(pos) === CLOSE_BRACE) return { end: pos + 1, found };
    const nameStart = pos;
    pos = stringEnd(json, pos);
    const isKey = nameIs(json, nameStart, pos, key);
    pos = skipWs(json, pos) + 1; // ':'
    const start = skipWs(json, pos);
    if (isKey && !last) {
      const inner = scanObject(json, start, path, depth + 1);
      found = inner.found;
      pos = inner.end;
    } else {
      pos = valueEnd(json, start);
      if (isKey) found = [start, pos];
    }
    pos = skipWs(json, pos);
    if (json.charCodeAt(pos) === COMMA) pos++;
  }
  return { end: json.length, found };
}

/**
 * Finds the exact source text of the value at `path` (object keys) inside JSON text that
 * JSON.parse has already accepted, e.g. ["params", "arguments"]. The gateway forwards tool
 * arguments as written by the agent, so big integers, number spelling and escapes reach the
 * Tool Service unchanged (contract §10: "MCP는 이름·값을 바꾸지 않는다"). Like JSON.parse,
 * the last of duplicate keys wins, so every member of each object on the path is crossed;
 * the text is read once, strings (most of a request's text) with indexOf. Returns undefined
 * when the path does not exist. The text must be valid JSON (the result is unspecified
 * otherwise).
 */
export function extractRawMember(json: string, path: readonly string[]): string | undefined {
  if (path.length === 0) return json;
  const range = scanObject(json, skipWs(json, 0), path, 0).found;
  return range === undefined ? undefined : json.slice(range[0], range[1]);
}

/** One member of a JSON object's text: its name, where it starts (the name's quote), and its value's range. */
export interface RawMemberRange {
  readonly name: string;
  /** The position of the member name's opening quote. */
  readonly start: number;
  readonly valueStart: number;
  /** Just past the value. */
  readonly end: number;
}

/**
 * The members of the JSON object text `json` in order, each with its source range, so that a
 * member can be cut out or kept as written (a result passed on without being serialized again,
 * docs/operations.md §10 "Routing"). Duplicate names are all listed. Undefined when the text is
 * not an object. The text must be valid JSON (the result is unspecified otherwise).
 */
export function objectMembers(json: string): RawMemberRange[] | undefined {
  let pos = skipWs(json, 0);
  if (json.charCodeAt(pos) !== OPEN_BRACE) return undefined;
  const members: RawMemberRange[] = [];
  pos++;
  while (pos < json.length) {
    pos = skipWs(json, pos);
    if (json.charCodeAt(pos) === CLOSE_BRACE) return members;
    const start = pos;
    pos = stringEnd(json, pos);
    const quoted = json.slice(start, pos);
    const name = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
    pos = skipWs(json, pos) + 1; // ':'
    const valueStart = skipWs(json, pos);
    pos = valueEnd(json, valueStart);
    members.push({ name, start, valueStart, end: pos });
    pos = skipWs(json, pos);
    if (json.charCodeAt(pos) === COMMA) pos++;
  }
  return members;
}

/** objectMembers, or undefined when one name occurs twice (only the last would count). */
export function distinctMembers(json: string): RawMemberRange[] | undefined {
  const members = objectMembers(json);
  if (members === undefined) return undefined;
  const names = new Set<string>();
  for (const member of members) {
    if (names.has(member.name)) return undefined;
    names.add(member.name);
  }
  return members;
}

/**
 * The JSON object text `json` with each of `updates` (a name and its value's JSON text) set as
 * `{...value, ...updates}` orders them: a member of that name gets the new text in its place, a
 * name it lacks is appended; every other member stays as written. `members` are the text's own
 * (distinctMembers), when the caller has them already. Undefined when the text is not an object
 * or a name occurs twice in it.
 */
export function withMembers(
  json: string,
  updates: ReadonlyMap<string, string>,
  members: readonly RawMemberRange[] | undefined = distinctMembers(json),
): string | undefined {
  if (members === undefined) return undefined;
  const written: string[] = [];
  const present = new Set<string>();
  for (const member of members) {
    const update = updates.get(member.name);
    present.add(member.name);
    written.push(
      update === undefined
        ? json.slice(member.start, member.end)
        : `${json.slice(member.start, member.valueStart)}${update}`,
    );
  }
  for (const [name, update] of updates)
    if (!present.has(name)) written.push(`${JSON.stringify(name)}:${update}`);
  return `{${written.join(',')}}`;
}
