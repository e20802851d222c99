import { randomBytes } from 'node:crypto';

/**
 * JSON text sent exactly as received (issue 10 §5: tool arguments byte for byte): a value of
 * params that `stringifyMessage` writes as its text, unparsed and unchanged, so numbers beyond
 * double precision, key order and escapes reach the upstream as the client wrote them. The
 * text must be one valid JSON value (the caller took it from a parsed request).
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify for an outgoing message whose params may hold RawJson values: each is
 * written as its own text. Markers are random per call, so no string of the message can
 * forge one.
 */
export function stringifyMessage(message: object): string {
  const raws: string[] = [];
  const nonce = randomBytes(6).toString('hex');
  const text = JSON.stringify(message, function (this: unknown, _key: string, value: unknown) {
    if (value instanceof RawJson) {
      raws.push(value.text);
      return `\u0000raw:${nonce}:${raws.length - 1}\u0000`;
    }
    return value;
  });
  if (raws.length === 0) return text;
  return text.replace(
    new RegExp(`"\\\\u0000raw:${nonce}:(\\d+)\\\\u0000"`, 'g'),
    (_m, i: string) => raws[Number(i)] ?? 'null',
  );
}
