import { RE2JS } from 're2js';
import { ecmaPatternForRe2 } from './ecma-pattern';

const matches = (pattern: string, text: string): boolean =>
  RE2JS.compile(ecmaPatternForRe2(pattern)).matcher(text).find();

describe('ECMA-262 patterns matched by RE2 as ECMA reads them', () => {
  it('agrees with ECMA on ., \\s, \\S and \\u escapes', () => {
    const cases: [string, string][] = [
      ['^.{1,40}$', 'a\rb'],
      ['^.{1,40}$', 'a\u2028b'],
      ['^.{1,40}$', 'plain text'],
      ['^\\S+$', 'P-1\u00a0X'],
      ['^\\S+$', 'P-1X'],
      ['^\\s*$', '\u00a0\ufeff'],
      ['^[\\s,]+$', ' ,\u3000'],
      ['^\\u00e9t\\u00E9$', 'été'],
      ['^\\u{1F600}$', '😀'],
      ['^[^.]+$', 'a.b'],
      ['^\\.\\s$', '.\u2029'],
      ['^P-[0-9]{6}$', 'P-123456'],
    ];
    for (const [pattern, text] of cases)
      expect([pattern, text, matches(pattern, text)]).toEqual([
        pattern,
        text,
        new RegExp(pattern, 'u').test(text),
      ]);
  });
});
