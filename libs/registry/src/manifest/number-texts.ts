/**
 * A manifest's numbers as the Tool Service wrote them (contract §5: name, title, description,
 * inputSchema, outputSchema and annotations go to tools/list as they are). JSON.parse reads a
 * number into a double and JSON.stringify writes the double: `1e400` came out as `null` (a
 * schema no client can read), `12345678901234567890` as `12345678901234567000`, `1.0` as `1`.
 * A manifest that holds such a number is parsed with its source texts kept (JSON.parse source
 * text access), and its published fields are written with them (JSON.rawJSON); every other
 * manifest is parsed as before (nearly all: the check costs one pass of a regular expression).
 * On a runtime without those JSON features (Node 20) numbers are written as doubles, as before.
 */

/** Where a number's text differs from what its double writes: its holder → its key → its text. */
export type NumberTexts = WeakMap<object, Map<string, string>>;

type RawJson = (text: string) => unknown;
type SourceReviver = (
  this: object,
  key: string,
  value: unknown,
  context?: { readonly source?: string },
) => unknown;

const rawJSON = (JSON as { rawJSON?: RawJson }).rawJSON;

/** A number token where a JSON value starts (after `[`, `:` or `,`); inside a string too, rarely. */
const NUMBER_TOKEN = /(?<=[[:,]\s*)-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Whether the text holds a number that its double would not write back as written. */
function rewrittenNumbers(text: string): boolean {
  for (const match of text.matchAll(NUMBER_TOKEN))
    if (String(Number(match[0])) !== match[0]) return true;
  return false;
}

/**
 * The number texts of `text` when it holds a number its double would rewrite, with the value
 * parsed from it (the holders are its objects); undefined when it holds none (or the runtime
 * cannot keep them): parse it as usual then.
 * @throws SyntaxError as JSON.parse
 */
export function parseKeepingNumbers(
  text: string,
): { readonly body: unknown; readonly numbers: NumberTexts } | undefined {
  if (rawJSON === undefined || !rewrittenNumbers(text)) return undefined;
  const numbers: NumberTexts = new WeakMap();
  const reviver: SourceReviver = function (key, value, context) {
    const source = context?.source;
    if (typeof value === 'number' && source !== undefined && String(value) !== source) {
      let texts = numbers.get(this);
      if (texts === undefined) numbers.set(this, (texts = new Map<string, string>()));
      texts.set(key, source);
    }
    return value;
  };
  // JSON.parse passes the context (source text access) as a third argument its type omits
  const body: unknown = JSON.parse(text, reviver);
  return { body, numbers };
}

/** JSON.stringify of a published entry, its numbers as written where `numbers` has them. */
export function stringifyWithNumbers(value: unknown, numbers: NumberTexts | undefined): string {
  if (numbers === undefined || rawJSON === undefined) return JSON.stringify(value);
  const raw = rawJSON;
  return JSON.stringify(value, function (this: object, key: string, member: unknown) {
    const text = numbers.get(this)?.get(key);
    return text === undefined ? member : raw(text);
  });
}
