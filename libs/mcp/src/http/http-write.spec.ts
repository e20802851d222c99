import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { NotificationStream } from '../listen/notification-stream';
import { streamAnswer } from '../answers/http-answer';
import { writeStream } from './http-write';

/** A real node:http server whose one response is `stream`, and a raw client that never reads. */
async function serve(stream: NotificationStream): Promise<{ server: Server; client: Socket }> {
  const server = createServer((_req, res) => void writeStream(res, streamAnswer(stream), stream));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise<void>((resolve) => client.once('data', () => resolve()));
  client.pause();
  return { server, client };
}

const until = async (check: () => boolean, ms = 20_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('writeStream honours backpressure (write() returning false)', () => {
  it('takes no frame while the socket has not drained, so what the client does not read waits, bounded, in the stream; a cut destroys the response', async () => {
    const stream = new NotificationStream(Number.POSITIVE_INFINITY);
    const { server, client } = await serve(stream);
    const frame = 'x'.repeat(64 * 1024);
    try {
      // fill the kernel's buffers and the response's: then frames stay queued here
      await until(() => {
        stream.push(frame);
        return stream.queued >= 4 * frame.length;
      });
      const queued = stream.queued;
      // nothing drains while the client does not read: the writer takes nothing more
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stream.queued).toBe(queued);
      let closed = false;
      client.on('close', () => (closed = true));
      client.on('error', () => undefined);
      stream.cut();
      client.resume();
      await until(() => closed);
    } finally {
      client.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a client that reads gets every frame, in order, and the end', async () => {
    const stream = new NotificationStream(1024 * 1024);
    const { server, client } = await serve(stream);
    let text = '';
    client.setEncoding('latin1');
    client.on('data', (chunk: string) => (text += chunk));
    let ended = false;
    client.on('end', () => (ended = true));
    try {
      client.resume();
      for (let i = 0; i < 2000; i++) stream.push(`{"n":${i},"pad":"${'p'.repeat(500)}"}`);
      stream.end();
      await until(() => text.includes('"n":1999') && text.endsWith('0\r\n\r\n'));
      const order = [...text.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]));
      expect(order).toEqual([...Array(2000).keys()]);
      expect(ended).toBe(false); // keep-alive: the response ended, the connection stays
    } finally {
      client.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
