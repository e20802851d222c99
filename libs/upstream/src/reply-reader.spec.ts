import { namesMethod, readAnswerEvent, readStreamMessage } from './reply-reader';

describe('reply-reader: an upstream message is refused before it is parsed when too wide', () => {
  const wide = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":[${Array.from(
    { length: 250_001 },
    () => '{}',
  ).join(',')}]}}`;

  it('drops a message on a stream nobody waits on (the GET stream, a listen)', () => {
    expect(readStreamMessage(wide)).toBeUndefined();
    expect(
      readStreamMessage('{"jsonrpc":"2.0","method":"notifications/message","params":{}}'),
    ).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: {},
    });
  });

  it('fails a call whose own stream carries one', () => {
    expect(() => readAnswerEvent(wide, undefined)).toThrow('more than 250000 JSON values');
  });
});

describe('reply-reader: on a listen (a stream of notifications) a bad notification is dropped', () => {
  const deep = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const notification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":${deep(200)}}}`;
  const response = `{"jsonrpc":"2.0","id":7,"result":{"data":${deep(200)}}}`;

  it('drops a notification too deep, and only with dropsMessages', () => {
    expect(readAnswerEvent(notification, undefined, true)).toBeUndefined();
    expect(() => readAnswerEvent(notification, undefined)).toThrow('nests deeper');
  });

  it('still fails the request on a response too deep', () => {
    expect(() => readAnswerEvent(response, undefined, true)).toThrow('nests deeper');
  });

  it('reads a good message as before', () => {
    expect(
      readAnswerEvent('{"jsonrpc":"2.0","method":"ping","id":1}', undefined, true)?.message,
    ).toEqual({ jsonrpc: '2.0', method: 'ping', id: 1 });
  });

  it('tells a top-level `method` member from one nested or in a string', () => {
    expect(namesMethod('{"jsonrpc":"2.0", "method" :"x"}')).toBe(true);
    expect(namesMethod('{"params":{"method":"x"},"id":1,"result":{}}')).toBe(false);
    expect(namesMethod('{"id":1,"result":"method","x":"\\"method\\":"}')).toBe(false);
    expect(namesMethod('{"id":1,"result":{"a":["method"]}}')).toBe(false);
  });
});
