import { readAnswerEvent, readStreamMessage } from './reply-reader';

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
