/**
 * JSON Schema patterns are ECMA-262 regular expressions (2020-12 §6.4; earlier drafts alike);
 * argument and answer checks match them with RE2 (re2js), in time linear in the input
 * (schema-dialects.ts). Where the two dialects read the same text differently, the pattern is
 * rewritten to RE2's spelling of ECMA's meaning, so a value is accepted or refused as the tool's
 * author meant:
 * - `.` (no `s` flag) matches anything but the four ECMA line terminators (RE2: all but `\n`);
 * - `\s` and `\S` are ECMA's white space and line terminators, Unicode spaces included (RE2:
 *   ASCII only), also inside a class (`\S` there stays RE2's: a negated set cannot be inlined);
 * - `\uXXXX` and `\u{X…}` are written `\x{…}` (RE2 has no `\u`).
 * Everything else is passed as written; what RE2 cannot take (look-around, back-references)
 * still fails to compile, as before.
 */
const SPACE =
  '\\t\\n\\v\\f\\r \\x{00A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
const ANY_BUT_LINE_END = '[^\\n\\r\\x{2028}\\x{2029}]';

export function ecmaPatternForRe2(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) {
        out += c;
        continue;
      }
      if (next === 's') {
        out += inClass ? SPACE : `[${SPACE}]`;
        i++;
        continue;
      }
      if (next === 'S' && !inClass) {
        out += `[^${SPACE}]`;
        i++;
        continue;
      }
      if (next === 'u') {
        const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i + 2));
        const plain = /^[0-9A-Fa-f]{4}/.exec(pattern.slice(i + 2));
        if (braced !== null) {
          out += `\\x{${braced[1]}}`;
          i += 1 + braced[0].length;
          continue;
        }
        if (plain !== null) {
          out += `\\x{${plain[0]}}`;
          i += 1 + plain[0].length;
          continue;
        }
      }
      out += c + next;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      continue;
    }
    out += c === '.' ? ANY_BUT_LINE_END : c;
  }
  return out;
}
