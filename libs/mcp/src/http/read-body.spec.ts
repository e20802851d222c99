import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { MCP_MAX_BODY_BYTES } from '@app/wire';
import { readMcpBody, type UnreadBody } from './read-body';

interface Read {
  readonly error: UnreadBody | null;
  readonly body?: Buffer;
  readonly dataListeners: number;
}

/** A real node:http server that reads each request's body with readMcpBody, and a raw client. */
async function readOne(
  request: (write: (text: string | Buffer) => void, end: () => void) => void,
): Promise<Read> {
  let server: Server | undefined;
  try {
    const read = new Promise<Read>((resolve) => {
      server = createServer((req: IncomingMessage, res) => {
        readMcpBody(req, (error, body) => {
          resolve({ error, body, dataListeners: req.listenerCount('data') });
          res.destroy();
        });
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const client = connect((server?.address() as AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    request(
      (text) => client.write(text),
      () => client.destroy(),
    );
    return await read;
  } finally {
    await new Promise((resolve) => server?.close(resolve));
  }
}

const head = (headers: string): string => `POST /mcp HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

describe('readMcpBody: the one body reader of both /mcp listeners', () => {
  it('gives the whole body as one Buffer, however it was chunked', async () => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { é: 'ü' } });
    const bytes = Buffer.from(text);
    const read = await readOne((write) => {
      write(head(`Content-Length: ${bytes.length}\r\n`));
      for (const byte of bytes) write(Buffer.from([byte]));
    });
    expect(read.error).toBeNull();
    expect(read.body?.toString('utf8')).toBe(text);
    expect(read.dataListeners).toBe(0);
  });

  it('refuses a declared Content-Length over the cap with 413 before reading a byte', async () => {
    const read = await readOne((write) =>
      write(head(`Content-Length: ${MCP_MAX_BODY_BYTES + 1}\r\n`)),
    );
    expect(read.error?.statusCode).toBe(413);
    expect(read.body).toBeUndefined();
  });

  it('refuses a chunked body that grows over the cap with 413 and stops listening to it', async () => {
    const read = await readOne((write) => {
      write(head('Transfer-Encoding: chunked\r\n'));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 5; i += 1) {
        write(`${chunk.length.toString(16)}\r\n`);
        write(chunk);
        write('\r\n');
      }
    });
    expect(read.error?.statusCode).toBe(413);
    expect(read.dataListeners).toBe(0);
  });

  it('ends a body the client cut off as the client going away (400 with the stream error code)', async () => {
    const read = await readOne((write, end) => {
      write(head('Content-Length: 100\r\n'));
      write('{"jsonrpc":');
      setTimeout(end, 50);
    });
    expect(read.error?.statusCode).toBe(400);
    expect(read.error?.code).toBe('ECONNRESET');
  });
});
