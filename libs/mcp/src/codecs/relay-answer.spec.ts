import { AnswerStream } from '../answers/answer-stream';
import { messageAnswer } from '../answers/http-answer';
import { streamWhenRelayed } from './relay-answer';

describe('streamWhenRelayed', () => {
  it.each(['json', 'sse'] as const)(
    'ends a relayed stream with the result message exactly, whether it was framed as %s',
    async (format) => {
      const stream = new AnswerStream();
      let finish!: (answer: ReturnType<typeof messageAnswer>) => void;
      const result = new Promise<ReturnType<typeof messageAnswer>>((r) => (finish = r));
      const answer = streamWhenRelayed(result, stream, () => undefined);
      stream.push('{"jsonrpc":"2.0","method":"notifications/message"}');
      expect((await answer).stream).toBe(stream);
      finish(messageAnswer(200, '{"jsonrpc":"2.0","id":3,"result":{}}', format));
      const messages: string[] = [];
      for await (const message of stream) messages.push(message);
      expect(messages).toEqual([
        '{"jsonrpc":"2.0","method":"notifications/message"}',
        '{"jsonrpc":"2.0","id":3,"result":{}}',
      ]);
    },
  );
});
