import { RawJson, stringifyMessage } from './raw-json';

describe('stringifyMessage: arguments byte for byte (docs/operations.md §10 "Routing")', () => {
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

describe('stringifyMessage, written as JSON.stringify would', () => {
  it('writes members around RawJson values the way JSON.stringify does', () => {
    const message = {
      jsonrpc: '2.0',
      id: 3,
      skipped: undefined,
      fn: () => 1,
      params: {
        list: [
          new RawJson('1.50'),
          undefined,
          'x',
          { deep: new RawJson('[ 1 ]'), none: undefined },
        ],
        when: new Date(0),
        '\u0000key"': null,
      },
    };
    const expected = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      params: {
        list: ['@1', null, 'x', { deep: '@2' }],
        when: new Date(0),
        '\u0000key"': null,
      },
    })
      .replace('"@1"', '1.50')
      .replace('"@2"', '[ 1 ]');
    expect(stringifyMessage(message)).toBe(expected);
  });

  it('writes a RawJson that is the whole message as its text', () => {
    expect(stringifyMessage(new RawJson('{"a": 1}'))).toBe('{"a": 1}');
  });
});
