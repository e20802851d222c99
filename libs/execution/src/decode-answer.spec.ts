import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { answerText, decodeAnswer } from './decode-answer';

describe('answerText: answers without Content-Encoding', () => {
  it('text/plain; charset=iso-8859-1 bytes 63 61 66 E9 give "café"', () => {
    expect(
      answerText(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1'),
    ).toBe('café');
  });

  it('reads JSON as UTF-8', () => {
    expect(answerText(Buffer.from('{"q":"北京"}'), 'application/json')).toBe('{"q":"北京"}');
  });

  it('gives an undecodable failure for an unknown charset', () => {
    expect(answerText(Buffer.from('x'), 'text/plain; charset=x-foo')).toEqual({
      kind: 'undecodable',
      reason: 'unknown charset "x-foo"',
    });
  });
});

describe('decodeAnswer: answers with a Content-Encoding (docs/operations.md §7)', () => {
  const TEXT = 'OK done — naïve';

  it('gunzips a text/plain answer', async () => {
    expect(await decodeAnswer(gzipSync(TEXT), 'text/plain', 'gzip', 1024)).toBe(TEXT);
  });

  it.each([
    ['deflate', deflateSync(TEXT)],
    ['br', brotliCompressSync(TEXT)],
    ['identity', Buffer.from(TEXT)],
    ['gzip, br', brotliCompressSync(gzipSync(TEXT))],
  ])('decodes "%s"', async (encoding, body) => {
    expect(await decodeAnswer(body, 'text/plain; charset=utf-8', encoding, 1024)).toBe(TEXT);
  });

  it('reads an empty body that names an encoding (a 204 with content-encoding: gzip) as empty', async () => {
    expect(await decodeAnswer(Buffer.alloc(0), '', 'gzip', 1024)).toBe('');
  });

  it('decodes the charset after the content coding (windows-1252 inside gzip)', async () => {
    const latin = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
    expect(
      await decodeAnswer(gzipSync(latin), 'text/plain; charset=windows-1252', 'gzip', 64),
    ).toBe('café €');
  });

  it('fails as too large once decoded on a gzip bomb (10 MB of zeros against a 1 MB cap)', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    expect(await decodeAnswer(bomb, 'application/json', 'gzip', 1024 * 1024)).toEqual({
      kind: 'too-large',
      maxBytes: 1024 * 1024,
      decoded: true,
    });
  });

  it('fails as undecodable on an unknown encoding, naming it', async () => {
    expect(await decodeAnswer(Buffer.from(TEXT), 'text/plain', 'compress', 1024)).toEqual({
      kind: 'undecodable',
      reason: 'unsupported content-encoding "compress" (supported: gzip, deflate, br, identity)',
    });
  });

  it('fails as undecodable on corrupt data', async () => {
    expect(await decodeAnswer(Buffer.from(TEXT), 'text/plain', 'gzip', 1024)).toMatchObject({
      kind: 'undecodable',
      reason: expect.stringContaining('the gzip data is corrupt or cut short'),
    });
  });
});
