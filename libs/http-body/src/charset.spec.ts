import { BodyDecodeError } from './body-errors';
import { decodeText } from './charset';

const CAFE_LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);

describe('decodeText: an answer decoded by its declared charset', () => {
  it('text/plain; charset=iso-8859-1 bytes 63 61 66 E9 give "café"', () => {
    expect(decodeText(CAFE_LATIN1, 'text/plain; charset=iso-8859-1')).toBe('café');
  });

  it('reads windows-1252, latin1 and a quoted, upper-case label', () => {
    // 0x80 is the euro sign in windows-1252
    expect(decodeText(Buffer.from([0x80, 0x31]), 'text/plain; charset=windows-1252')).toBe('€1');
    expect(decodeText(CAFE_LATIN1, 'text/csv;charset=latin1')).toBe('café');
    expect(decodeText(CAFE_LATIN1, 'Text/Plain; format=flowed; Charset="ISO-8859-1"')).toBe('café');
  });

  it('reads shift_jis', () => {
    expect(decodeText(Buffer.from([0x93, 0xfa, 0x96, 0x7b]), 'text/plain; charset=shift_jis')).toBe(
      '日本',
    );
  });

  it('reads a non-JSON, non-text type by its declared charset too', () => {
    expect(decodeText(CAFE_LATIN1, 'application/xml; charset=iso-8859-1')).toBe('café');
  });

  it('keeps JSON in UTF-8 whatever charset it declares (RFC 8259 §8.1)', () => {
    const utf8 = Buffer.from('{"q":"café"}', 'utf8');
    expect(decodeText(utf8, 'application/json; charset=iso-8859-1')).toBe('{"q":"café"}');
    expect(decodeText(utf8, 'application/problem+json; charset=windows-1252')).toBe('{"q":"café"}');
  });

  it('reads UTF-8 when no charset is declared, and invalid bytes as U+FFFD', () => {
    expect(decodeText(Buffer.from('naïve 北京', 'utf8'), 'text/plain')).toBe('naïve 北京');
    expect(decodeText(CAFE_LATIN1, 'text/plain')).toBe('caf\ufffd');
    expect(decodeText(CAFE_LATIN1, '')).toBe('caf\ufffd');
  });

  it('refuses an unknown charset label, naming it', () => {
    expect(() => decodeText(CAFE_LATIN1, 'text/plain; charset=x-foo')).toThrow(BodyDecodeError);
    expect(() => decodeText(CAFE_LATIN1, 'text/plain; charset=x-foo')).toThrow(
      'unknown charset "x-foo"',
    );
  });
});

describe('decodeText: windows-1252 bytes 0x80–0x9F (WHATWG index, which Node 20 gets wrong)', () => {
  it('maps 0x80 to €, 0x93/0x94 to curly quotes and 0x9F to Ÿ, also under the iso-8859-1 label', () => {
    const bytes = Buffer.from([0x80, 0x20, 0x93, 0x61, 0x94, 0x20, 0x9f]);
    expect(decodeText(bytes, 'text/plain; charset=windows-1252')).toBe('€ “a” Ÿ');
    expect(decodeText(bytes, 'text/plain; charset=iso-8859-1')).toBe('€ “a” Ÿ');
  });

  it('keeps the five bytes windows-1252 leaves undefined as their C1 code points', () => {
    expect(
      decodeText(Buffer.from([0x81, 0x8d, 0x8f, 0x90, 0x9d]), 'text/plain; charset=cp1252'),
    ).toBe('\u0081\u008d\u008f\u0090\u009d');
  });
});
