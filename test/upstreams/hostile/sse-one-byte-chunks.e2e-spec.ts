import { createServer, type Server, type Socket } from 'node:net';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';

/** The answer's text: 5 MiB, under the 8 MiB answer cap (mcp.execution.maxResponseBytes). */
const TEXT_BYTES = 5 * 1024 * 1024;

/**
 * A 2025 upstream on a raw socket that answers tools/call with one SSE event whose `data` line
 * is sent one byte per HTTP chunk (`1\r\nx\r\n`): the gateway's HTTP client hands each chunk
 * over as a Buffer of its own, however the bytes arrive.
 */
function dripServer(): Server {
  return createServer((socket: Socket) => {
    let pending = '';
    socket.on('data', (data: Buffer) => {
      pending += data.toString('latin1');
      for (;;) {
        const head = pending.indexOf('\r\n\r\n');
        if (head < 0) return;
        const headText = pending.slice(0, head);
        const length = Number(/content-length: *(\d+)/i.exec(headText)?.[1] ?? 0);
        if (pending.length < head + 4 + length) return;
        const body = pending.slice(head + 4, head + 4 + length);
        pending = pending.slice(head + 4 + length);
        // the GET stream and the DELETE at shutdown carry no message: not offered, no content
        if (!headText.startsWith('POST ')) {
          socket.write(
            `HTTP/1.1 ${headText.startsWith('GET ') ? '405 Method Not Allowed' : '200 OK'}\r\nContent-Length: 0\r\n\r\n`,
          );
          continue;
        }
        const message = JSON.parse(body) as { id?: number; method: string };
        answer(socket, message);
      }
    });
  });
}

function answer(socket: Socket, message: { id?: number; method: string }): void {
  const json = (result: unknown): void => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  };
  if (message.id === undefined) {
    socket.write('HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n');
  } else if (message.method === 'initialize') {
    json({
      protocolVersion: '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'drip', version: '1' },
    });
  } else if (message.method === 'tools/list') {
    json({ tools: [{ name: 'big', inputSchema: { type: 'object' } }] });
  } else if (message.method === 'tools/call') {
    const response = JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: 'x'.repeat(TEXT_BYTES) }] },
    });
    const event = `event: message\ndata: ${response}\n\n`;
    socket.write(
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    let at = 0;
    const more = (): void => {
      while (at < event.length) {
        const part = Array.from(event.slice(at, at + 4096), (c) => `1\r\n${c}\r\n`).join('');
        at += 4096;
        if (!socket.write(part)) {
          socket.once('drain', more);
          return;
        }
      }
      socket.write('0\r\n\r\n');
    };
    more();
  } else {
    json({});
  }
}

describe('an upstream that sends its SSE answer one byte per chunk', () => {
  let server: Server;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    server = dripServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('drip', `http://127.0.0.1:${port}/mcp`, { timeouts: { callMillis: 60_000 } }),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('is read whole at about what its bytes cost: the parser is fed lines, not one string per byte', async () => {
    const before = await gateway.residentMb();
    const call = await rpc(gateway.mcpUrl, 'tools/call', { name: 'drip__big', arguments: {} });
    expect(call.json.result.content[0].text).toHaveLength(TEXT_BYTES);
    // one string per chunk took about 50 bytes a byte (~260 MB here); held and fed by the line,
    // the answer costs what its copies do
    expect((await gateway.residentMb()) - before).toBeLessThan(160);
  });
});
