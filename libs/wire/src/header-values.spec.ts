import { decodeHeaderValue, encodeHeaderValue } from './header-values';

describe('encodeHeaderValue (2026 base64 sentinel)', () => {
  it('passes safe plain ASCII through', () => {
    expect(encodeHeaderValue('echo')).toBe('echo');
    expect(encodeHeaderValue('add.numbers')).toBe('add.numbers');
    expect(encodeHeaderValue('config://app?x=1 y')).toBe('config://app?x=1 y');
    expect(encodeHeaderValue('a\tb')).toBe('a\tb');
  });

  it('encodes non-ASCII and surrounding whitespace, canonical padded base64 (capture W-sql)', () => {
    expect(encodeHeaderValue('Zürich ')).toBe('=?base64?WsO8cmljaCA=?=');
    expect(encodeHeaderValue(' x')).toBe(`=?base64?${Buffer.from(' x').toString('base64')}?=`);
    expect(encodeHeaderValue('echo')).not.toContain('=?base64?');
    expect(encodeHeaderValue('ech')).toBe('ech');
  });

  it('encodes control characters, the empty value, and values that look like the sentinel', () => {
    expect(encodeHeaderValue('a\nb')).toBe(`=?base64?${Buffer.from('a\nb').toString('base64')}?=`);
    expect(encodeHeaderValue('')).toBe('=?base64??=');
    expect(encodeHeaderValue('=?base64?ZWNobw==?=')).toBe(
      `=?base64?${Buffer.from('=?base64?ZWNobw==?=').toString('base64')}?=`,
    );
  });
});

describe('decodeHeaderValue (the front door reads what a 2026 client encoded)', () => {
  it('takes a plain value as it is and decodes a canonical sentinel', () => {
    expect(decodeHeaderValue('echo')).toBe('echo');
    expect(decodeHeaderValue('=?base64?WsO8cmljaCA=?=')).toBe('Zürich ');
    expect(decodeHeaderValue('=?base64??=')).toBe('');
  });

  it('refuses a malformed sentinel: not canonical, unpadded, or not UTF-8', () => {
    expect(decodeHeaderValue('=?base64?WsO8cmljaCA?=')).toBeUndefined();
    expect(
      decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`),
    ).toBeUndefined();
  });

  it('takes a value that starts like the sentinel but lacks its ?= end as a literal (SEP-2243)', () => {
    expect(decodeHeaderValue('=?base64?WsO8cmljaCA=')).toBe('=?base64?WsO8cmljaCA=');
    expect(decodeHeaderValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
  });

  it('reads back every value encodeHeaderValue writes', () => {
    for (const value of ['echo', 'Zürich ', '', ' x', 'a\nb', '=?base64?ZWNobw==?=', '東京'])
      expect(decodeHeaderValue(encodeHeaderValue(value))).toBe(value);
  });
});
