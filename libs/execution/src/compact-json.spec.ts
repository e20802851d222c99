import { compactJson } from './compact-json';

describe('compactJson: insignificant whitespace removed, everything else byte for byte (contract §10)', () => {
  it('compacts the B18 t_json body and keeps key order', () => {
    expect(compactJson('{"b":1,  "a":[1, 2], "nested":{"z":null}}')).toBe(
      '{"b":1,"a":[1,2],"nested":{"z":null}}',
    );
  });

  it('compacts the B18 t_array body', () => {
    expect(compactJson('[ 1, "x" ]')).toBe('[1,"x"]');
  });

  it('keeps a JSON string with its quotes (B18 t_string)', () => {
    expect(compactJson('"done"')).toBe('"done"');
  });

  it('removes every JSON whitespace character: space, tab, CR and LF', () => {
    expect(compactJson('{\r\n\t"a" :\t[ true ,\nfalse ] ,\r"b"\n:\r\nnull }\n')).toBe(
      '{"a":[true,false],"b":null}',
    );
  });

  it('keeps big integers as written (12345678901234567890 would lose digits through JSON.parse)', () => {
    expect(compactJson('{ "id": 12345678901234567890, "n": -0.000000000000000000001 }')).toBe(
      '{"id":12345678901234567890,"n":-0.000000000000000000001}',
    );
  });

  it('keeps number spellings such as 1.0, 1e3, 1E+3 and -0', () => {
    expect(compactJson('[ 1.0, 1e3, 1E+3, -0, 0.10 ]')).toBe('[1.0,1e3,1E+3,-0,0.10]');
  });

  it('keeps escape sequences as written (\\u00e9, \\/, \\n, \\")', () => {
    const text = String.raw`{ "name": "caf\u00e9", "path": "a\/b", "lines": "x\ny", "q": "say \"hi\"" }`;
    expect(compactJson(text)).toBe(
      String.raw`{"name":"caf\u00e9","path":"a\/b","lines":"x\ny","q":"say \"hi\""}`,
    );
  });

  it('keeps whitespace inside strings, including around escaped quotes and backslashes', () => {
    const text = String.raw`{ "a" : "  two  spaces\ttab " , "b" : "ends with backslash \\" , "c" : " \" { [ , ] } " }`;
    expect(compactJson(text)).toBe(
      String.raw`{"a":"  two  spaces\ttab ","b":"ends with backslash \\","c":" \" { [ , ] } "}`,
    );
  });

  it('keeps raw non-ASCII text and Unicode line separators inside strings', () => {
    expect(compactJson('{ "k": "한글 😀 \u2028 \u00a0" }')).toBe('{"k":"한글 😀 \u2028 \u00a0"}');
  });

  it('returns already compact text unchanged', () => {
    const text = '{"a":[1,{"b":"c d"}],"e":null}';
    expect(compactJson(text)).toBe(text);
  });

  it('produces text that parses to the same value', () => {
    const text = '{ "a" : [ 1 , 2.5 , "x y" , { "b" : false } ] , "c" : { } , "d" : [ ] }';
    expect(JSON.parse(compactJson(text))).toEqual(JSON.parse(text));
    expect(compactJson(text)).toBe('{"a":[1,2.5,"x y",{"b":false}],"c":{},"d":[]}');
  });
});

describe('compactJson on large answers (the byte-level pass)', () => {
  it('gives the same text as the small-text pass, multibyte text and escapes included', () => {
    const value = Array.from({ length: 3000 }, (_, i) => ({
      id: i,
      name: `naïve 北京 🌍 "q" \\ ${i}`,
      big: 7,
    }));
    // a number no JavaScript number holds, written by the Tool Service: it must survive
    const pretty = JSON.stringify(value, null, 2).replace(
      /"big": 7/g,
      '"big": 12345678901234567890',
    );
    expect(pretty.length).toBeGreaterThan(64 * 1024);
    const compacted = compactJson(pretty);
    expect(compacted).toBe(JSON.stringify(value).replace(/"big":7/g, '"big":12345678901234567890'));
    expect(compacted).toContain('12345678901234567890');
  });

  it('compacts an answer made of millions of separators', () => {
    const big = `[${Array(2_000_000).fill('1').join(', ')}]`;
    expect(compactJson(big)).toBe(`[${Array(2_000_000).fill('1').join(',')}]`);
  });
});
