import { BodyDecodeError } from './body-errors';

/** The content codings this gateway decodes (RFC 9110 §8.4.1), in node:zlib. */
export type ContentCoding = 'gzip' | 'deflate' | 'br';

/** More stacked codings than this is no real server's doing; refused rather than chained. */
const MAX_CODINGS = 3;

const ALIASES: Readonly<Record<string, ContentCoding | 'identity'>> = {
  gzip: 'gzip',
  'x-gzip': 'gzip', // RFC 9110 §8.4.1.3: a recipient SHOULD treat x-gzip as gzip
  deflate: 'deflate',
  br: 'br',
  identity: 'identity',
};

/** A header token as it may appear in a reason: visible ASCII only, at most 40 characters. */
function printable(token: string): string {
  return token.slice(0, 40).replace(/[^\x21-\x7e]/g, '?');
}

/**
 * Reads a Content-Encoding header into the decoders to run, in the order they must run.
 *
 * The header lists codings in the order they were applied (RFC 9110 §8.4), so they are
 * undone in reverse: `gzip, br` is brotli-decoded first, then gunzipped. `identity` (and an
 * empty header) means no decoding. Names are case-insensitive.
 *
 * @param header the Content-Encoding value(s) as received; undefined when absent
 * @returns the decoding order (possibly empty)
 * @throws BodyDecodeError naming the first coding it does not know (`compress`, `zstd`,
 *   `x-foo`, ...), or when more than three codings are stacked
 */
export function decodingOrder(header: string | readonly string[] | undefined): ContentCoding[] {
  if (header === undefined) return [];
  const joined = typeof header === 'string' ? header : header.join(',');
  const applied: ContentCoding[] = [];
  for (const raw of joined.split(',')) {
    const name = raw.trim().toLowerCase();
    if (name === '') continue;
    const coding = ALIASES[name];
    if (coding === undefined) {
      throw new BodyDecodeError(
        `unsupported content-encoding "${printable(name)}" (supported: gzip, deflate, br, identity)`,
      );
    }
    if (coding !== 'identity') applied.push(coding);
  }
  if (applied.length > MAX_CODINGS) {
    throw new BodyDecodeError(
      `${applied.length} stacked content-encodings (at most ${MAX_CODINGS} are decoded)`,
    );
  }
  return applied.reverse();
}
