import { parseMessage, parseReply } from './json-rpc';

describe('parseReply: the message, and a result as the upstream wrote it', () => {
  it.each([
    [
      'result first (v1 SDKs)',
      '{"result":{"n":12345678901234567890,"s":"caf\\u00e9"},"jsonrpc":"2.0","id":7}',
    ],
    [
      'result last',
      '{"jsonrpc":"2.0","id":7,"result":{"n":12345678901234567890,"s":"caf\\u00e9"}}',
    ],
    ['a string id', '{"result":{"a":[1.0,2]},"jsonrpc":"2.0","id":"req-1"}'],
    ['a string id, result last', '{"jsonrpc":"2.0","id":"req-1","result":{"a":[1.0,2]}}'],
    ['a negative id and whitespace inside', '{"result": { "a" : 1 } ,"jsonrpc":"2.0","id":-3}'],
    [
      'the tail repeated inside the result',
      '{"result":{"x":",\\"jsonrpc\\":\\"2.0\\",\\"id\\":1}","y":{"jsonrpc":"2.0","id":5}},"jsonrpc":"2.0","id":1}',
    ],
  ])('%s: the message JSON.parse gives, and the result text as sent', (_name, text) => {
    const parsed = parseReply(text);
    expect(parsed?.message).toEqual(JSON.parse(text));
    expect(Object.keys(parsed!.message)).toEqual(Object.keys(JSON.parse(text) as object));
    expect(parsed?.resultText).toBeDefined();
    expect(JSON.parse(parsed!.resultText!)).toEqual(
      (JSON.parse(text) as { result: unknown }).result,
    );
    expect(text).toContain(parsed!.resultText!);
  });

  it('keeps the exact spelling of the result (numbers, escapes)', () => {
    expect(
      parseReply('{"result":{"n":1.50,"s":"\\u00e9"},"jsonrpc":"2.0","id":1}')?.resultText,
    ).toBe('{"n":1.50,"s":"\\u00e9"}');
  });

  it.each([
    ['duplicate members', '{"result":{},"id":{},"jsonrpc":"2.0","id":1}'],
    ['a duplicate result', '{"result":{"a":1},"result":{"b":2},"jsonrpc":"2.0","id":1}'],
    ['whitespace around the envelope', '{ "jsonrpc": "2.0", "id": 1, "result": {} }'],
    ['an extra member', '{"jsonrpc":"2.0","id":1,"result":{},"x":1}'],
    ['an error', '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}'],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}'],
    ['a request', '{"jsonrpc":"2.0","id":2,"method":"roots/list"}'],
  ])('%s: parsed whole, as JSON.parse reads it, with no result text', (_name, text) => {
    const parsed = parseReply(text);
    expect(parsed?.message).toEqual(JSON.parse(text));
    expect(parsed?.resultText).toBeUndefined();
  });

  it.each([
    ['an id that is not JSON', '{"result":{},"jsonrpc":"2.0","id":007}'],
    ['a broken result', '{"result":{"a":},"jsonrpc":"2.0","id":1}'],
    ['a broken result, last', '{"jsonrpc":"2.0","id":1,"result":{"a":}'],
    ['not JSON-RPC', '{"result":{},"jsonrpc":"1.0","id":1}'],
    ['not an object', '[1]'],
  ])('%s: undefined, as parseMessage says', (_name, text) => {
    expect(parseMessage(text)).toBeUndefined();
    expect(parseReply(text)).toBeUndefined();
  });
});
