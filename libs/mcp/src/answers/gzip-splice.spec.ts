import { constants, deflateRawSync, gunzipSync } from 'node:zlib';
import { acceptsGzip, gzipParts, PrecompressedBytes } from './gzip-splice';

function precompressed(text: string): PrecompressedBytes {
  const raw = Buffer.from(text, 'utf8');
  return new PrecompressedBytes(raw, deflateRawSync(raw, { finishFlush: constants.Z_SYNC_FLUSH }));
}

describe('gzipParts: one gzip member spliced from stored blocks and a precompressed part', () => {
  it('decodes to the parts joined, for a JSON-RPC answer around a precompressed list', () => {
    const tools = `[${Array.from({ length: 2000 }, (_, i) => `{"name":"t.${i}","description":"é ${i}"}`).join(',')}]`;
    const parts = [
      '{"jsonrpc":"2.0","id":"ü-7","result":',
      '{"tools":',
      precompressed(tools),
      '}',
      '}',
    ];
    const { buffers, length } = gzipParts(parts);
    const body = Buffer.concat(buffers);
    expect(body.length).toBe(length);
    expect(body.length).toBeLessThan(tools.length / 4);
    expect(gunzipSync(body).toString('utf8')).toBe(
      `{"jsonrpc":"2.0","id":"ü-7","result":{"tools":${tools}}}`,
    );
  });

  it('splits a part longer than one stored block (65,535 bytes), e.g. a huge string id', () => {
    const id = 'x'.repeat(200_000);
    const parts = [`{"id":"${id}","tools":`, precompressed('[]'), '}'];
    expect(gunzipSync(Buffer.concat(gzipParts(parts).buffers)).toString()).toBe(
      `{"id":"${id}","tools":[]}`,
    );
  });

  it('sends a part without a compressed copy as stored bytes', () => {
    const parts = ['a', new PrecompressedBytes(Buffer.from('bcd'), undefined), Buffer.from('e')];
    expect(gunzipSync(Buffer.concat(gzipParts(parts).buffers)).toString()).toBe('abcde');
  });

  it('is also read by a streaming decoder that stops at the end of the member', async () => {
    const { createGunzip } = await import('node:zlib');
    const parts = ['event: message\ndata: ', precompressed('{"x":1}'), '\n\n'];
    const gunzip = createGunzip();
    const chunks: Buffer[] = [];
    gunzip.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise((r) => gunzip.on('end', r));
    for (const b of gzipParts(parts).buffers) gunzip.write(b);
    gunzip.end();
    await done;
    expect(Buffer.concat(chunks).toString()).toBe('event: message\ndata: {"x":1}\n\n');
  });
});

describe('acceptsGzip (Accept-Encoding, RFC 9110 §12.5.3)', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['*', true],
    ['gzip;q=0', false],
    ['identity', false],
    ['br', false],
    ['*;q=0.5, gzip;q=0', false],
  ])('%s → %s', (value, expected) => {
    expect(acceptsGzip({ 'accept-encoding': value })).toBe(expected);
  });

  it('is false without the header', () => {
    expect(acceptsGzip({})).toBe(false);
  });
});
