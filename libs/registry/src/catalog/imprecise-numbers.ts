/**
 * Numbers a JSON text holds that a double does not: what JSON.parse gives (and what the
 * gateway checks) is not the value a source that reads decimals exactly gets, since the
 * arguments are forwarded byte for byte (docs/operations.md §6 "Argument validation").
 * `{"n": 1.00000000000000000001}` is 1 to the check and more than 1 to a BigDecimal reader.
 */

/** A number written with more digits, or a larger or smaller exponent, than a double holds. */
export interface ImpreciseNumber {
  /** Where it is: member names and array indices from the text's top. */
  readonly path: readonly (string | number)[];
  /** As written, cut to 40 characters. */
  readonly text: string;
  /** What JSON.parse made of it. */
  readonly value: number;
  /** The written value has a fractional part (the double may not). */
  readonly fractional: boolean;
}

/**
 * Cheap test ahead of the scan: 16 digits in a row (a dot between them allowed) or a
 * three-digit exponent. A double holds every decimal of up to 15 significant digits within
 * its exponent range, so a text without either has no imprecise number (strings may match:
 * the scan then looks closer).
 */
const MAYBE_IMPRECISE = /(?:\d\.?){16}|[eE][+-]?\d{3}/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** A double's bits, read and written through one shared buffer. */
const bits = new Float64Array(1);
const ints = new BigInt64Array(bits.buffer);

/** Significant digits and the position of the decimal point among them (0.12 → "12", 0). */
function decimalOf(text: string): { readonly digits: string; readonly point: number } {
  const unsigned = text.startsWith('-') ? text.slice(1) : text;
  const e = unsigned.search(/[eE]/);
  const mantissa = e < 0 ? unsigned : unsigned.slice(0, e);
  const exponent = e < 0 ? 0 : Number(unsigned.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const whole = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  let point = (dot < 0 ? mantissa.length : dot) + exponent;
  let start = 0;
  while (start < whole.length && whole.charCodeAt(start) === 0x30) start++;
  point -= start;
  let end = whole.length;
  while (end > start && whole.charCodeAt(end - 1) === 0x30) end--;
  return { digits: whole.slice(start, end), point: end === start ? 0 : point };
}

/** The exact decimal value of a finite double, as significant digits and point position. */
function exactDecimalOf(value: number): { readonly digits: string; readonly point: number } {
  bits[0] = Math.abs(value);
  const raw = ints[0] as bigint;
  const biased = Number((raw >> 52n) & 0x7ffn);
  const fraction = raw & 0xfffffffffffffn;
  // value = mantissa × 2^exponent, exactly
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  if (mantissa === 0n) return { digits: '', point: 0 };
  if (exponent >= 0) return decimalOf((mantissa << BigInt(exponent)).toString());
  // mantissa / 2^-exponent = mantissa × 5^-exponent / 10^-exponent
  const scaled = (mantissa * 5n ** BigInt(-exponent)).toString();
  return decimalOf(`${scaled}e${exponent}`);
}

/**
 * Whether `value` (what JSON.parse made of `text`) is the number `text` writes: the double's
 * shortest form (`0.1`, what a decimal reader reads the same) or its exact value (2^64 written
 * out, `0.1000000000000000055511151231257827021181583404541015625`).
 */
function heldExactly(text: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const written = decimalOf(text);
  const shortest = decimalOf(String(Math.abs(value)));
  if (written.digits === shortest.digits && written.point === shortest.point) return true;
  const exact = exactDecimalOf(value);
  return written.digits === exact.digits && written.point === exact.point;
}

type Frame = { readonly object: true; key: string } | { readonly object: false; index: number };

/**
 * The numbers of a JSON text (already parsed, so well formed) that a double does not hold as
 * written, in order; at most `limit` + 1 of them (more than `limit` says "too many to probe").
 */
export function impreciseNumbers(json: string, limit: number): ImpreciseNumber[] {
  const found: ImpreciseNumber[] = [];
  if (!MAYBE_IMPRECISE.test(json)) return found;
  const frames: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      for (; j < json.length; j++) {
        const d = json.charCodeAt(j);
        if (d === 0x5c) j++;
        else if (d === 0x22) break;
      }
      const top = frames[frames.length - 1];
      if (expectKey && top?.object === true) {
        const quoted = json.slice(i, j + 1);
        top.key = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b) {
      frames.push({ object: true, key: '' });
      expectKey = true;
    } else if (c === 0x5b) {
      frames.push({ object: false, index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top?.object === true) expectKey = true;
      else if (top !== undefined) top.index++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(json)?.[0] ?? json.charAt(i);
      const value = Number(token);
      if (!heldExactly(token, value)) {
        const { digits, point } = decimalOf(token);
        found.push({
          path: frames.map((f) => (f.object ? f.key : f.index)),
          text: token.slice(0, 40),
          value,
          fractional: digits.length > point,
        });
        if (found.length > limit) return found;
      }
      i += token.length - 1;
    }
  }
  return found;
}

/** The doubles next to `value` on either side (finite `value`). */
export function neighbours(value: number): [number, number] {
  if (value === 0) return [-Number.MIN_VALUE, Number.MIN_VALUE];
  bits[0] = value;
  const at = ints[0] as bigint;
  ints[0] = at - 1n;
  const a = bits[0];
  ints[0] = at + 1n;
  const b = bits[0];
  return a < b ? [a, b] : [b, a];
}
