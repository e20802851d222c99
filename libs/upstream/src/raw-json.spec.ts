import { RawJson, stringifyMessage } from './raw-json';

describe('stringifyMessage (issue 10 §5: arguments byte for byte)', () => {
  it('writes RawJson values as their text, unparsed', () => {
    const raw = '{ "n": 12345678901234567890, "s":"caf\\u00e9" , "b":[1.0] }';
    const text = stringifyMessage({
      jsonrpc: '2.0',
      id: 1,
      params: { name: 't', arguments: new RawJson(raw), _meta: { progressToken: 'p' } },
    });
    expect(text).toBe(
      `{"jsonrpc":"2.0","id":1,"params":{"name":"t","arguments":${raw},"_meta":{"progressToken":"p"}}}`,
    );
  });

  it('leaves messages without RawJson as JSON.stringify writes them, and cannot be forged by a string', () => {
    const message = { a: '\u0000raw:000000000000:0\u0000', b: [1, 'x'] };
    expect(stringifyMessage(message)).toBe(JSON.stringify(message));
    const mixed = stringifyMessage({ s: '\u0000raw:abc:0\u0000', r: new RawJson('7') });
    expect(JSON.parse(mixed)).toEqual({ s: '\u0000raw:abc:0\u0000', r: 7 });
  });
});
