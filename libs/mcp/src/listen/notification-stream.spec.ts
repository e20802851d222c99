import type { SseFrame } from '../answers/sse-frame';
import { NotificationStream } from './notification-stream';

async function take(stream: NotificationStream, count: number): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  const it = stream[Symbol.asyncIterator]();
  while (out.length < count) {
    const next = await it.next();
    if (next.done === true) break;
    out.push(next.value);
  }
  return out;
}

describe('a notification stream holds at most maxQueuedBytes for a client that does not read', () => {
  it('queues what the writer has not taken, counted in bytes, and frees what it took', async () => {
    const stream = new NotificationStream(100);
    stream.push('a'.repeat(40));
    stream.comment('keepalive');
    expect(stream.queued).toBe(49);
    expect(await take(stream, 1)).toEqual(['a'.repeat(40)]);
    expect(stream.queued).toBe(9);
    stream.push('b'.repeat(90));
    expect(stream.isEnded).toBe(false);
    expect(stream.queued).toBe(99);
  });

  it('past the bound it is cut: the queue is dropped, it ends, onOverflow and every cut listener run once', async () => {
    const overflow = jest.fn();
    const stream = new NotificationStream(100, overflow);
    const cut = jest.fn();
    stream.onCut(cut);
    stream.push('a'.repeat(60));
    stream.push('b'.repeat(41));
    expect(stream.isEnded).toBe(true);
    expect(stream.queued).toBe(0);
    expect(overflow).toHaveBeenCalledTimes(1);
    expect(cut).toHaveBeenCalledTimes(1);
    // nothing more is taken or queued, and a later push does not count again
    stream.push('c');
    stream.comment('keepalive');
    expect(overflow).toHaveBeenCalledTimes(1);
    expect(await take(stream, 5)).toEqual([]);
  });

  it('one frame larger than the bound reaches a client that keeps up; one more behind it, unread, cuts', async () => {
    const overflow = jest.fn();
    const stream = new NotificationStream(100, overflow);
    stream.push('a'.repeat(500));
    expect(stream.isEnded).toBe(false);
    expect(await take(stream, 1)).toEqual(['a'.repeat(500)]);
    stream.push('b'.repeat(500));
    expect(stream.isEnded).toBe(false);
    stream.push('c');
    expect(stream.isEnded).toBe(true);
    expect(overflow).toHaveBeenCalledTimes(1);
  });

  it('a writer waiting for the next frame is woken by a cut and stops', async () => {
    const stream = new NotificationStream(10);
    const pending = take(stream, 1);
    stream.cut();
    expect(await pending).toEqual([]);
  });

  it('end keeps what is queued (and the last message); unbounded by default', async () => {
    const stream = new NotificationStream();
    for (let i = 0; i < 1000; i++) stream.push('x'.repeat(1000));
    stream.end('last');
    const frames = await take(stream, 2000);
    expect(frames).toHaveLength(1001);
    expect(frames.at(-1)).toBe('last');
  });
});
