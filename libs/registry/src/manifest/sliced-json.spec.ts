import { parseJsonSliced } from './sliced-json';

/** A manifest-like text above the slicing threshold. */
function large(tools = 3000): string {
  const list = Array.from({ length: tools }, (_, i) => ({
    name: `p.t${i}`,
    description: `tool ${i} "quoted" \\ ]}[{`,
    inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
    _meta: { version: '1' },
  }));
  return JSON.stringify(
    { bundleId: 'b', revision: 'r', tools: list, extra: [1, { x: [2] }] },
    null,
    1,
  );
}

describe('parseJsonSliced: JSON.parse in slices for large manifests', () => {
  it('gives exactly what JSON.parse gives', async () => {
    const text = large();
    expect(text.length).toBeGreaterThan(256 * 1024);
    expect(await parseJsonSliced(text)).toEqual(JSON.parse(text));
  });

  it('keeps __proto__ as an own property and lets the last duplicate key win, like JSON.parse', async () => {
    const text = `{"__proto__":{"polluted":true},"a":1,"a":2,"pad":"${'x'.repeat(300_000)}"}`;
    const parsed = (await parseJsonSliced(text)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(Object.keys(JSON.parse(text) as object));
    expect(parsed.a).toBe(2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['trailing garbage', (t: string) => `${t} x`],
    [
      'a missing comma between members',
      (t: string) => t.replace('"b",\n "revision"', '"b"\n "revision"'),
    ],
    ['a truncated text', (t: string) => t.slice(0, t.length - 10)],
    ['a missing comma between tools', (t: string) => t.replace('},\n  {', '}\n  {')],
    [
      'an invalid value inside a tool',
      (t: string) => t.replace('"type": "string"', '"type": strin'),
    ],
  ])('throws SyntaxError on %s, like JSON.parse', async (_label, breakIt) => {
    const text = breakIt(large());
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    await expect(parseJsonSliced(text)).rejects.toThrow(SyntaxError);
  });

  it('parses small texts and non-object values with one JSON.parse', async () => {
    expect(await parseJsonSliced('[1,2]')).toEqual([1, 2]);
    expect(await parseJsonSliced('{"a":1}')).toEqual({ a: 1 });
    await expect(parseJsonSliced('{"a":')).rejects.toThrow(SyntaxError);
  });
});
