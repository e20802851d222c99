/**
 * JSON text sent exactly as received (tool arguments byte for byte,
 * docs/operations.md §10 "Routing"): a value of params that `stringifyMessage` writes as its text,
 * unparsed and unchanged, so numbers beyond double precision, key order and escapes reach the
 * upstream as the client wrote them. The text must be one valid JSON value (the caller took it from
 * a parsed request).
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Whether `value` is, or holds anywhere inside its own members, a RawJson. */
function holdsRaw(value: unknown): boolean {
  if (value instanceof RawJson) return true;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (holdsRaw(item)) return true;
    return false;
  }
  for (const key of Object.keys(value))
    if (holdsRaw((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * `value` as JSON.stringify writes it, each RawJson as its own text; undefined where
 * JSON.stringify writes nothing (undefined, a function, a symbol). Only the objects and arrays
 * on the way to a RawJson are written here; every other member is JSON.stringify's.
 */
function write(value: unknown): string | undefined {
  if (value instanceof RawJson) return value.text;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as { toJSON?: unknown }).toJSON === 'function' ||
    !holdsRaw(value)
  )
    return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const key of Object.keys(value)) {
    const text = write((value as Record<string, unknown>)[key]);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * JSON.stringify for an outgoing message whose params may hold RawJson values: each is
 * written as its own text. Nothing is written as a marker and searched for afterwards, so no
 * string of the message can stand for a RawJson.
 */
export function stringifyMessage(message: object): string {
  return write(message) ?? 'null';
}
