import { TextDecoder } from 'node:util';
import { BodyDecodeError } from './body-errors';
import { isJsonEssence, parseMediaType } from './media-type';

/** Invalid bytes become U+FFFD: the answer is text for an agent, not data to reject. */
const UTF8 = new TextDecoder('utf-8');

/** One decoder per label seen (labels come from Tool Services, so the map is bounded). */
const decoders = new Map<string, TextDecoder>([
  ['utf-8', UTF8],
  ['utf8', UTF8],
]);
const MAX_CACHED = 64;
const CHARSET = /charset/i;

/**
 * WHATWG index-windows-1252 for bytes 0x80–0x9F. Node 20's TextDecoder gives C1 controls
 * (U+0080–U+009F) there instead, i.e. ISO-8859-1; the labels windows-1252, iso-8859-1 and
 * latin1 all mean windows-1252 (WHATWG Encoding), so `€` (0x80), `“` (0x93) ... are restored.
 */
const WINDOWS_1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const C1 = /[\u0080-\u009f]/g;

function decodeWith(decoder: TextDecoder, bytes: Uint8Array): string {
  const text = decoder.decode(bytes);
  if (decoder.encoding !== 'windows-1252') return text;
  return text.replace(C1, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80] as string);
}

function decoderFor(label: string): TextDecoder {
  let decoder = decoders.get(label);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(label);
    } catch {
      throw new BodyDecodeError(
        `unknown charset "${label.slice(0, 40).replace(/[^\x21-\x7e]/g, '?')}"`,
      );
    }
    if (decoders.size < MAX_CACHED) decoders.set(label, decoder);
  }
  return decoder;
}

/**
 * Turns an answer's bytes into text by its Content-Type:
 * - JSON (`application/json`, `+json`): UTF-8, whatever a charset parameter says (RFC 8259 §8.1);
 * - any other type that declares a charset (`text/plain; charset=iso-8859-1`, `text/csv;
 *   charset=shift_jis`, ...): that charset, through TextDecoder (WHATWG Encoding labels;
 *   `iso-8859-1` and `latin1` are read as windows-1252, as browsers do);
 * - no charset: UTF-8 (RFC 9110 dropped the old ISO-8859-1 default for text/*).
 * Invalid byte sequences become U+FFFD. A BOM of the charset used is dropped.
 *
 * Cheap on the hot path: a type without `charset` costs one regular-expression test.
 *
 * @throws BodyDecodeError for a charset label TextDecoder does not know (the reason names it)
 */
export function decodeText(bytes: Uint8Array, contentType: string): string {
  if (!CHARSET.test(contentType)) return UTF8.decode(bytes);
  const { essence, charset } = parseMediaType(contentType);
  if (charset === undefined || charset === '' || isJsonEssence(essence)) return UTF8.decode(bytes);
  return decodeWith(decoderFor(charset), bytes);
}
