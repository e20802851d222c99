import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { BodyDecodeError, BodyTooLargeError } from './body-errors';
import { decodeBuffer } from './decode-buffer';
import { readBody } from './read-body';

const TEXT = Buffer.from(JSON.stringify({ bundleId: 'b', note: 'naïve café '.repeat(500) }));
const MB = 1024 * 1024;

/** A source that hands out `chunks` one by one and counts how many bytes were taken. */
function countingSource(chunks: readonly Buffer[]): { source: Readable; taken: () => number } {
  let taken = 0;
  const source = Readable.from(
    (function* () {
      for (const chunk of chunks) {
        taken += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  return { source, taken: () => taken };
}

function split(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('readBody: content codings decoded while streaming, every cap on the bytes as they flow', () => {
  it('returns an unencoded body as received', async () => {
    const { source } = countingSource(split(TEXT, 1000));
    expect(await readBody(source, { codings: [], maxBytes: MB })).toEqual(TEXT);
  });

  it.each([
    ['gzip', gzipSync(TEXT)],
    ['deflate', deflateSync(TEXT)],
    ['br', brotliCompressSync(TEXT)],
  ] as const)('decodes %s', async (coding, encoded) => {
    const { source } = countingSource(split(encoded, 100));
    expect(await readBody(source, { codings: [coding], maxBytes: MB })).toEqual(TEXT);
  });

  it('decodes stacked codings in the order given (gzip, br: brotli first, then gunzip)', async () => {
    const encoded = brotliCompressSync(gzipSync(TEXT));
    expect(await decodeBuffer(encoded, ['br', 'gzip'], MB)).toEqual(TEXT);
  });

  it('hands every decoded chunk to onChunk, so a hash can be computed on the way', async () => {
    const hash = createHash('sha1');
    const { source } = countingSource(split(gzipSync(TEXT), 50));
    await readBody(source, { codings: ['gzip'], maxBytes: MB, onChunk: (c) => hash.update(c) });
    expect(hash.digest('hex')).toBe(createHash('sha1').update(TEXT).digest('hex'));
  });

  it('copies into one buffer when the exact size is known, and still handles a body longer than declared', async () => {
    const exact = countingSource(split(TEXT, 333));
    expect(
      await readBody(exact.source, { codings: [], maxBytes: MB, sizeHint: TEXT.length }),
    ).toEqual(TEXT);
    const longer = countingSource(split(TEXT, 333));
    expect(await readBody(longer.source, { codings: [], maxBytes: MB, sizeHint: 10 })).toEqual(
      TEXT,
    );
  });

  it('accepts a body of exactly maxBytes, decoded or not', async () => {
    const exact = Buffer.alloc(4096, 0x61);
    expect(await decodeBuffer(gzipSync(exact), ['gzip'], 4096)).toEqual(exact);
    expect(await readBody(countingSource([exact]).source, { codings: [], maxBytes: 4096 })).toEqual(
      exact,
    );
  });

  it('refuses an unencoded body over maxBytes as it arrives, without reading the rest', async () => {
    const { source, taken } = countingSource(split(Buffer.alloc(4 * MB), 64 * 1024));
    const reading = readBody(source, { codings: [], maxBytes: MB });
    await expect(reading).rejects.toThrow(BodyTooLargeError);
    await expect(reading).rejects.toMatchObject({ stage: 'received', maxBytes: MB });
    expect(taken()).toBeLessThan(2 * MB);
  });

  it('a gzip bomb (10 MB of zeros) fails as too large once decoded output passes the cap', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * MB));
    expect(bomb.length).toBeLessThan(MB); // small on the wire: only the decoded cap can catch it
    await expect(decodeBuffer(bomb, ['gzip'], MB)).rejects.toMatchObject({
      name: 'BodyTooLargeError',
      stage: 'decoded',
      maxBytes: MB,
    });
  });

  it('stops inflating a bomb while decoding: a 2 GB multi-member gzip is not read to its end', async () => {
    // 200 gzip members of 10 MB of zeros each: 2 GB once decoded, about 2 MB on the wire
    const member = gzipSync(Buffer.alloc(10 * MB));
    const members = Array.from({ length: 200 }, () => member);
    const { source, taken } = countingSource(members);
    const rssBefore = process.memoryUsage().rss;
    await expect(readBody(source, { codings: ['gzip'], maxBytes: MB })).rejects.toMatchObject({
      stage: 'decoded',
    });
    expect(taken()).toBeLessThan(members.length * member.length);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MB);
  });

  it('stops a brotli bomb the same way, and a bomb hidden under a second coding', async () => {
    const br = brotliCompressSync(Buffer.alloc(20 * MB));
    await expect(decodeBuffer(br, ['br'], MB)).rejects.toMatchObject({ stage: 'decoded' });
    const stacked = brotliCompressSync(gzipSync(Buffer.alloc(20 * MB)));
    await expect(decodeBuffer(stacked, ['br', 'gzip'], MB)).rejects.toMatchObject({
      stage: 'decoded',
    });
  });

  it('refuses compressed bytes over maxBytes on the wire as received', async () => {
    const random = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251));
    await expect(decodeBuffer(random, ['gzip'], 1024)).rejects.toMatchObject({
      stage: 'received',
    });
  });

  it.each([
    ['corrupt gzip', Buffer.from('not gzip at all'), 'gzip'],
    ['gzip cut short', gzipSync(TEXT).subarray(0, 40), 'gzip'],
    ['raw deflate (not the zlib format HTTP names)', deflateRawSync(TEXT), 'deflate'],
    ['corrupt brotli', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00]), 'br'],
  ] as const)('fails as undecodable on %s, naming the coding', async (_label, bytes, coding) => {
    const decoding = decodeBuffer(bytes, [coding], MB);
    await expect(decoding).rejects.toThrow(BodyDecodeError);
    await expect(decoding).rejects.toThrow(`the ${coding} data is corrupt or cut short`);
  });

  it("passes the source's own error through as is, not as a decoding failure", async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', errno: -104 });
    const encoded = gzipSync(TEXT);
    const source = new Readable({
      read() {
        this.push(encoded.subarray(0, 20));
        this.destroy(reset);
      },
    });
    await expect(readBody(source, { codings: ['gzip'], maxBytes: MB })).rejects.toBe(reset);
  });
});
