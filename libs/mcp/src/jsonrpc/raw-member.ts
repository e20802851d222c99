/**
 * Finds the exact source text of the value at `path` (object keys) inside JSON text that
 * JSON.parse has already accepted, e.g. ["params", "arguments"]. The gateway forwards tool
 * arguments as written by the agent, so big integers, number spelling and escapes reach the
 * Tool Service unchanged (contract §10: "MCP는 이름·값을 바꾸지 않는다"). Like JSON.parse,
 * the last of duplicate keys wins. Returns undefined when the path does not exist.
 */
export function extractRawMember(json: string, path: readonly string[]): string | undefined {
  let pos = 0;

  const skipWs = (): void => {
    while (pos < json.length) {
      const c = json.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
  };
  /** Scans a string starting at its opening quote; returns the raw text without quotes. */
  const scanString = (): string => {
    const start = ++pos;
    while (pos < json.length) {
      const c = json.charCodeAt(pos);
      if (c === 0x5c) pos += 2;
      else if (c === 0x22) break;
      else pos++;
    }
    return json.slice(start, pos++);
  };
  /** Skips any value; returns [start, end). */
  const skipValue = (): [number, number] => {
    skipWs();
    const start = pos;
    const c = json.charCodeAt(pos);
    if (c === 0x22) {
      scanString();
    } else if (c === 0x7b || c === 0x5b) {
      let depth = 0;
      while (pos < json.length) {
        const d = json.charCodeAt(pos);
        if (d === 0x22) {
          scanString();
          continue;
        }
        if (d === 0x7b || d === 0x5b) depth++;
        else if (d === 0x7d || d === 0x5d) {
          depth--;
          if (depth === 0) {
            pos++;
            break;
          }
        }
        pos++;
      }
    } else {
      while (pos < json.length && !',}] \n\r\t'.includes(json.charAt(pos))) pos++;
    }
    return [start, pos];
  };
  /** Inside the object at pos, finds the last member named key; returns its value range. */
  const findMember = (key: string): [number, number] | undefined => {
    skipWs();
    if (json.charCodeAt(pos) !== 0x7b) return undefined;
    pos++;
    let found: [number, number] | undefined;
    while (pos < json.length) {
      skipWs();
      if (json.charCodeAt(pos) === 0x7d) break;
      const rawKey = scanString();
      const name = rawKey.includes('\\') ? (JSON.parse(`"${rawKey}"`) as string) : rawKey;
      skipWs();
      pos++; // ':'
      const range = skipValue();
      if (name === key) found = range;
      skipWs();
      if (json.charCodeAt(pos) === 0x2c) pos++;
    }
    return found;
  };

  let range: [number, number] = [0, json.length];
  for (const key of path) {
    pos = range[0];
    const next = findMember(key);
    if (next === undefined) return undefined;
    range = next;
  }
  return json.slice(range[0], range[1]);
}
