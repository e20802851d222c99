import { crc32 } from 'node:zlib';
import Negotiator from 'negotiator';
import type { IncomingHeaders } from '@app/execution';

/**
 * Bytes of a response body that also exist as raw DEFLATE blocks ending in a sync flush
 * (the tools/list `tools` array, compressed once per catalog snapshot).
 */
export class PrecompressedBytes {
  constructor(
    readonly raw: Buffer,
    /** undefined: no compressed copy (a small list); the raw bytes are sent as they are. */
    readonly deflated: Buffer | undefined,
  ) {}
}

/** One part of a response body written in parts. */
export type BodyPart = string | Buffer | PrecompressedBytes;

/** gzip header: magic, CM=8 (deflate), no flags, MTIME 0, XFL 0, OS 255 (unknown); RFC 1952 §2.3. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final stored block: BFINAL=1, BTYPE=00, LEN=0, NLEN=0xffff (RFC 1951 §3.2.4). */
const FINAL_EMPTY_BLOCK = Buffer.from([0x01, 0x00, 0x00, 0xff, 0xff]);
const MAX_STORED = 0xffff;

/** `data` as non-final stored DEFLATE blocks (at most 65,535 bytes each), byte-aligned. */
function storedBlocks(data: Buffer, out: Buffer[]): void {
  for (let at = 0; at < data.length; at += MAX_STORED) {
    const chunk = data.subarray(at, at + MAX_STORED);
    const head = Buffer.allocUnsafe(5);
    head[0] = 0x00; // BFINAL=0, BTYPE=00 (stored); the rest of the byte is padding
    head.writeUInt16LE(chunk.length, 1);
    head.writeUInt16LE(~chunk.length & 0xffff, 3);
    out.push(head, chunk);
  }
}

/** Whether the body has a compressed copy worth sending. */
export function hasPrecompressed(parts: readonly BodyPart[]): boolean {
  return parts.some((p) => p instanceof PrecompressedBytes && p.deflated !== undefined);
}

/** Whether the client accepts a gzip-encoded answer (Accept-Encoding, q > 0; RFC 9110 §12.5.3). */
export function acceptsGzip(headers: IncomingHeaders): boolean {
  const accept = headers['accept-encoding'];
  if (accept === undefined) return false;
  return new Negotiator({ headers: { 'accept-encoding': accept } })
    .encodings(['gzip'])
    .includes('gzip');
}

/**
 * One gzip member (RFC 1952) of the parts, in order: small parts as stored blocks, a
 * PrecompressedBytes part as its DEFLATE blocks, then an empty final block and the trailer.
 * Nothing large is compressed per request; only the CRC-32 reads every byte (zlib's, at
 * several GB/s).
 * @returns the buffers to write, in order, and their total length
 */
export function gzipParts(parts: readonly BodyPart[]): { buffers: Buffer[]; length: number } {
  const buffers: Buffer[] = [GZIP_HEADER];
  let crc = 0;
  let size = 0;
  for (const part of parts) {
    if (part instanceof PrecompressedBytes) {
      crc = crc32(part.raw, crc);
      size += part.raw.length;
      if (part.deflated === undefined) storedBlocks(part.raw, buffers);
      else buffers.push(part.deflated);
      continue;
    }
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    crc = crc32(bytes, crc);
    size += bytes.length;
    storedBlocks(bytes, buffers);
  }
  const trailer = Buffer.allocUnsafe(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size >>> 0, 4); // ISIZE: the size modulo 2^32
  buffers.push(FINAL_EMPTY_BLOCK, trailer);
  let length = 0;
  for (const b of buffers) length += b.length;
  return { buffers, length };
}
