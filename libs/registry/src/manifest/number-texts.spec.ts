import { parseKeepingNumbers, stringifyWithNumbers } from './number-texts';

const modern = typeof (JSON as { rawJSON?: unknown }).rawJSON === 'function';

describe('number texts: numbers of a manifest published as written', () => {
  (modern ? it : it.skip)(
    'keeps numbers a double would rewrite (overflow, precision, trailing zeros, exponents, -0) in objects and arrays',
    () => {
      const text =
        '{"inputSchema":{"maximum":1e400,"minimum":12345678901234567890,"multipleOf":1.0,' +
        '"enum":[1E2,-0,0.1,7],"x":{"default":2.50}}}';
      const kept = parseKeepingNumbers(text);
      expect(kept).toBeDefined();
      const body = kept!.body as { inputSchema: Record<string, unknown> };
      // the parsed value is the usual one (what validation reads)
      expect(body.inputSchema.maximum).toBe(Infinity);
      expect(
        stringifyWithNumbers({ name: 'n', inputSchema: body.inputSchema }, kept!.numbers),
      ).toBe(
        '{"name":"n","inputSchema":{"maximum":1e400,"minimum":12345678901234567890,"multipleOf":1.0,' +
          '"enum":[1E2,-0,0.1,7],"x":{"default":2.50}}}',
      );
    },
  );

  it('leaves a manifest whose numbers a double writes back unchanged to the usual parse', () => {
    expect(parseKeepingNumbers('{"a":[1,2.5,-3,0.125],"v":"1.0.0","b":1e-7}')).toBeUndefined();
    expect(stringifyWithNumbers({ a: 1 }, undefined)).toBe('{"a":1}');
  });

  it('throws on text that is not JSON, as JSON.parse does', () => {
    expect(() => parseKeepingNumbers('{"a":1.0,')).toThrow(SyntaxError);
  });
});
