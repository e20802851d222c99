import {
  JsonDepthScanner,
  MAX_PARSED_VALUES,
  textDepthExceeds,
  textValuesExceed,
} from './json-depth';

describe('JsonDepthScanner: nesting of JSON bytes fed in chunks', () => {
  const chunksOf = (text: string, size: number): Buffer[] => {
    const bytes = Buffer.from(text, 'utf8');
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
    return out;
  };
  const exceeds = (text: string, limit: number, size: number): boolean => {
    const scanner = new JsonDepthScanner(limit);
    return chunksOf(text, size).some((c) => scanner.exceeds(c));
  };

  it.each([1, 2, 7, 4096])(
    'agrees with the text scan whatever the chunk size (%d bytes)',
    (size) => {
      const samples = [
        `${'['.repeat(128)}1${']'.repeat(128)}`,
        `${'['.repeat(129)}1${']'.repeat(129)}`,
        `{"a":"${'['.repeat(500)}","b":[{"c":"\\"["}]}`,
        `[${'{"k":"é\\\\","v":[1,2]},'.repeat(300)}0]`,
        `{"s":"\\\\\\"[[[[[["}`,
      ];
      for (const text of samples) {
        expect(exceeds(text, 128, size)).toBe(textDepthExceeds(text, 128));
        expect(exceeds(text, 2, size)).toBe(textDepthExceeds(`${text}${' '.repeat(10)}`, 2));
      }
    },
  );

  it('stops at the first byte past the limit of a 6 MB answer of nested brackets', () => {
    const scanner = new JsonDepthScanner(128);
    expect(scanner.exceeds(Buffer.from('['.repeat(129)))).toBe(true);
  });
});

describe('textDepthExceeds: nesting of a whole text', () => {
  it('finds a text nested past the limit, however long and wherever the nesting is', () => {
    const deep = `${'['.repeat(129)}1${']'.repeat(129)}`;
    expect(textDepthExceeds(deep, 128)).toBe(true);
    expect(textDepthExceeds(`{"pad":"${'x'.repeat(5000)}","v":${deep}}`, 128)).toBe(true);
    expect(textDepthExceeds(`{"a":${'{"b":'.repeat(129)}1${'}'.repeat(129)}}`, 128)).toBe(true);
  });

  it('accepts texts at the limit, and many brackets side by side or inside strings', () => {
    expect(textDepthExceeds(`${'['.repeat(128)}1${']'.repeat(128)}`, 128)).toBe(false);
    expect(textDepthExceeds(`[${'[],'.repeat(1000)}[]]`, 128)).toBe(false);
    expect(textDepthExceeds(`{"s":"${'[{'.repeat(1000)}"}`, 128)).toBe(false);
    expect(textDepthExceeds(`{"s":"${'x'.repeat(5000)}"}`, 128)).toBe(false);
  });

  it('counts escaped quotes as part of their string', () => {
    const inString = `{"s":"\\"${'['.repeat(200)}"}`;
    expect(textDepthExceeds(inString, 128)).toBe(false);
    const afterBackslash = `{"s":"\\\\","v":${'['.repeat(200)}${']'.repeat(200)}}`;
    expect(textDepthExceeds(afterBackslash, 128)).toBe(true);
  });
});

describe('textValuesExceed: how many values a JSON text holds, before it is parsed', () => {
  const array = (n: number, item: string): string =>
    `[${Array.from({ length: n }, () => item).join(',')}]`;

  it('counts commas and openings outside strings', () => {
    expect(textValuesExceed(array(1000, '{}'), 1000)).toBe(true); // 999 commas, 1001 openings
    expect(textValuesExceed(array(400, '1'), 1000)).toBe(false);
    expect(textValuesExceed(`["${','.repeat(5000)}"]`, 1000)).toBe(false);
    expect(textValuesExceed(`["\\"${','.repeat(5000)}"]`, 1000)).toBe(false);
  });

  it('does not scan a text too short to hold that many', () => {
    expect(textValuesExceed(',,,', 2)).toBe(false);
    expect(textValuesExceed(array(MAX_PARSED_VALUES + 1, '{}'))).toBe(true);
    expect(textValuesExceed(array(200_000, '0'))).toBe(false);
  });
});
