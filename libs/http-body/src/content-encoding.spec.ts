import { BodyDecodeError } from './body-errors';
import { decodingOrder } from './content-encoding';

describe('decodingOrder: Content-Encoding read into the decoders to run (RFC 9110 §8.4)', () => {
  it('runs no decoder for an absent header, an empty one or identity', () => {
    expect(decodingOrder(undefined)).toEqual([]);
    expect(decodingOrder('')).toEqual([]);
    expect(decodingOrder('identity')).toEqual([]);
    expect(decodingOrder('Identity')).toEqual([]);
  });

  it('reads gzip, deflate and br case-insensitively, and x-gzip as gzip', () => {
    expect(decodingOrder('gzip')).toEqual(['gzip']);
    expect(decodingOrder('GZip')).toEqual(['gzip']);
    expect(decodingOrder('x-gzip')).toEqual(['gzip']);
    expect(decodingOrder('deflate')).toEqual(['deflate']);
    expect(decodingOrder(' br ')).toEqual(['br']);
  });

  it('undoes stacked codings in reverse order of application (gzip, br: br first)', () => {
    expect(decodingOrder('gzip, br')).toEqual(['br', 'gzip']);
    expect(decodingOrder('deflate,identity,gzip')).toEqual(['gzip', 'deflate']);
    expect(decodingOrder(['gzip', 'br'])).toEqual(['br', 'gzip']);
  });

  it.each(['compress', 'x-compress', 'zstd', 'x-foo', 'gzip, zstd'])(
    'refuses the unknown coding in "%s", naming it',
    (header) => {
      const name = header.split(',').at(-1)!.trim();
      expect(() => decodingOrder(header)).toThrow(BodyDecodeError);
      expect(() => decodingOrder(header)).toThrow(`unsupported content-encoding "${name}"`);
    },
  );

  it('shows only visible ASCII of an unknown coding, at most 40 characters', () => {
    expect(() => decodingOrder(`bad\u0007${'x'.repeat(100)}`)).toThrow(
      `unsupported content-encoding "bad?${'x'.repeat(36)}"`,
    );
  });

  it('refuses more than three stacked codings', () => {
    expect(() => decodingOrder('gzip, gzip, gzip, gzip')).toThrow('4 stacked content-encodings');
    expect(decodingOrder('gzip, gzip, gzip')).toEqual(['gzip', 'gzip', 'gzip']);
  });
});
