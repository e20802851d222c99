import { Readable } from 'node:stream';
import type { ContentCoding } from './content-encoding';
import { readBody } from './read-body';

/**
 * Decodes a body already received whole (a tool answer, collected under its own cap):
 * the codings run as streams, with the output of each capped at `maxBytes` as it is produced.
 *
 * @throws BodyTooLargeError (stage `decoded`) or BodyDecodeError, as readBody
 */
export function decodeBuffer(
  bytes: Buffer,
  codings: readonly ContentCoding[],
  maxBytes: number,
): Promise<Buffer> {
  return readBody(Readable.from([bytes], { objectMode: false }), { codings, maxBytes });
}
