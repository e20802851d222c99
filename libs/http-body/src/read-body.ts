import { Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate, type Zlib } from 'node:zlib';
import { BodyDecodeError, BodyTooLargeError, type BodyStage } from './body-errors';
import { ChunkList } from './chunk-list';
import type { ContentCoding } from './content-encoding';

/** How to read one body. */
export interface ReadBodyOptions {
  /** Decoders to run, in order (from `decodingOrder`); empty for an unencoded body. */
  readonly codings: readonly ContentCoding[];
  /** The cap, in bytes, on the bytes received and on the output of every decoder. */
  readonly maxBytes: number;
  /** The exact size the body declared (Content-Length of an unencoded body), to copy into one buffer. */
  readonly sizeHint?: number;
  /** Sees every chunk of the final (decoded) bytes, in order: e.g. a hash computed while reading. */
  readonly onChunk?: (chunk: Buffer) => void;
}

/**
 * The decoder of one coding. HTTP `deflate` is the zlib format (RFC 9110 §8.4.1.2); a raw
 * deflate stream, which some old servers send, fails as corrupt rather than being guessed at.
 */
export function contentDecoder(coding: ContentCoding): Transform & Zlib {
  switch (coding) {
    case 'gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
  }
}

/** Passes bytes through, failing as soon as more than `maxBytes` have gone by. */
class ByteCap extends Transform {
  private seen = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly stage: BodyStage,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) callback(new BodyTooLargeError(this.stage, this.maxBytes));
    else callback(null, chunk);
  }
}

/**
 * Joins chunks into one buffer. With an exact size hint the chunks are copied into one buffer
 * as they arrive, so a large body costs no single long copy at the end; without one (or past
 * it) they are kept in a ChunkList, whose cost stays bounded by the bytes however small the
 * chunks.
 */
class Collector {
  private sized: Buffer | undefined;
  private readonly chunks = new ChunkList();
  private total = 0;

  constructor(sizeHint: number | undefined) {
    if (sizeHint !== undefined && Number.isSafeInteger(sizeHint) && sizeHint > 0) {
      this.sized = Buffer.allocUnsafeSlow(sizeHint);
    }
  }

  get length(): number {
    return this.total;
  }

  add(chunk: Buffer): void {
    if (this.sized !== undefined && this.total + chunk.length > this.sized.length) {
      // more than declared: keep what was copied and collect the rest as chunks
      this.chunks.add(this.sized.subarray(0, this.total));
      this.sized = undefined;
    }
    if (this.sized !== undefined) chunk.copy(this.sized, this.total);
    else this.chunks.add(chunk);
    this.total += chunk.length;
  }

  bytes(): Buffer {
    if (this.sized !== undefined) return this.sized.subarray(0, this.total);
    return this.chunks.bytes();
  }
}

/** A node:zlib failure carries a numeric errno (Z_DATA_ERROR, Z_BUF_ERROR, brotli's codes). */
export function isZlibError(err: unknown): boolean {
  // duck-typed: node's errors need not come from this realm's Error (e.g. under Jest)
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { errno?: unknown }).errno === 'number'
  );
}

/**
 * Reads a body to its end: decodes its content codings (node:zlib streams) and caps, while
 * the bytes flow, both the bytes received and the output of every decoder at `maxBytes`. A
 * gzip or brotli bomb is therefore stopped after about `maxBytes` of output, never inflated
 * whole. The source is destroyed on any failure.
 *
 * @returns the decoded bytes (at most `maxBytes`)
 * @throws BodyTooLargeError when a cap is passed (`stage` says which bytes)
 * @throws BodyDecodeError when compressed data is corrupt or cut short (the reason names the coding)
 * @throws the source's own error (a reset socket, a timeout the caller destroyed it with) as is
 */
export async function readBody(source: Readable, options: ReadBodyOptions): Promise<Buffer> {
  const { codings, maxBytes } = options;
  const collector = new Collector(codings.length === 0 ? options.sizeHint : undefined);
  const finalStage: BodyStage = codings.length === 0 ? 'received' : 'decoded';
  let sourceError: unknown;
  source.once('error', (err) => (sourceError ??= err));
  let decodeFailure: { coding: ContentCoding; err: unknown } | undefined;
  const stages: Transform[] = [];
  codings.forEach((coding, i) => {
    if (i === 0) stages.push(new ByteCap(maxBytes, 'received'));
    const decoder = contentDecoder(coding);
    decoder.once('error', (err) => {
      // Only the decoder's own failure: the others reach it too when the pipeline tears down.
      if (decodeFailure === undefined && err !== sourceError && isZlibError(err)) {
        decodeFailure = { coding, err };
      }
    });
    stages.push(decoder);
    if (i < codings.length - 1) stages.push(new ByteCap(maxBytes, 'decoded'));
  });
  const onChunk = options.onChunk;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback): void {
      if (collector.length + chunk.length > maxBytes) {
        callback(new BodyTooLargeError(finalStage, maxBytes));
        return;
      }
      onChunk?.(chunk);
      collector.add(chunk);
      callback();
    },
  });
  try {
    await pipeline([source, ...stages, sink]);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw err;
    if (decodeFailure !== undefined && decodeFailure.err === err) {
      const code = (err as { code?: unknown }).code;
      throw new BodyDecodeError(
        `the ${decodeFailure.coding} data is corrupt or cut short${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    }
    throw err;
  }
  return collector.bytes();
}
