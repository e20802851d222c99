import { AnswerStream } from './answer-stream';

async function drain(stream: AnswerStream): Promise<string[]> {
  const out: string[] = [];
  for await (const message of stream) out.push(message);
  return out;
}

describe("a call's SSE answer holds at most maxQueuedBytes of relayed messages for a client that does not read", () => {
  it('past the bound it is cut: queued messages dropped, the writer told, the result not delivered', async () => {
    const stream = new AnswerStream(100);
    const cut = jest.fn();
    stream.onCut(cut);
    stream.push('a'.repeat(60));
    stream.push('b'.repeat(60));
    expect(cut).toHaveBeenCalledTimes(1);
    stream.end('{"result":1}');
    expect(await drain(stream)).toEqual([]);
  });

  it('the result always fits, however large; a writer registering after a cut is told at once', async () => {
    const stream = new AnswerStream(100);
    stream.push('a'.repeat(60));
    stream.end('r'.repeat(10_000));
    expect(await drain(stream)).toEqual(['a'.repeat(60), 'r'.repeat(10_000)]);
    const early = new AnswerStream(10);
    early.push('x'.repeat(6));
    early.push('x'.repeat(6));
    const late = jest.fn();
    early.onCut(late);
    expect(late).toHaveBeenCalledTimes(1);
    await early.first; // settled by the cut: the answer is written (and destroyed) at once
  });

  it('one message larger than the cap reaches a client that keeps up; one more behind it, unread, cuts', async () => {
    const stream = new AnswerStream(100);
    const it = stream[Symbol.asyncIterator]();
    const cut = jest.fn();
    stream.onCut(cut);
    // nothing queued: the writer takes it as it takes any other
    stream.push('b'.repeat(1_000));
    expect((await it.next()).value).toBe('b'.repeat(1_000));
    stream.push('c'.repeat(1_000));
    expect(cut).not.toHaveBeenCalled();
    // the client has not read that one yet: another message goes past the cap
    stream.push('d'.repeat(10));
    expect(cut).toHaveBeenCalledTimes(1);
  });

  it('what the writer took no longer counts', async () => {
    const stream = new AnswerStream(100);
    const it = stream[Symbol.asyncIterator]();
    for (let i = 0; i < 10; i++) {
      stream.push('m'.repeat(60));
      expect((await it.next()).value).toBe('m'.repeat(60));
    }
    const cut = jest.fn();
    stream.onCut(cut);
    expect(cut).not.toHaveBeenCalled();
  });
});
