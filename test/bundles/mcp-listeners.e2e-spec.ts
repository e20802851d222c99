import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { postRaw, STANDARD_HEADERS } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * The two listeners that can serve /mcp (MCP_HTTP_SERVER): `fastify`, the default
 * (McpController in a Nest fastify application), and `node`, the opt-in McpHttpServer on plain
 * node:http (docs/architecture.md "Which Nest pieces carry what"; docs/benchmarks.md has both
 * measured). Both hand the same transport the raw body bytes and must answer alike, status, headers
 * and body.
 */
interface Plain {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * One request with full control over the headers; with a declared content-length and no
 * `body`, only the headers are sent (the body never follows).
 */
/** A response read to its end. */
function plainOf(res: IncomingMessage): Promise<Plain> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Plain> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      plainOf(res).then((plain) => {
        resolve(plain);
        // a body declared but never sent: drop the connection, it is not reusable
        req.destroy();
      }, reject);
    });
    req.on('error', reject);
    if (body === undefined && headers['content-length'] !== undefined) req.flushHeaders();
    else req.end(body);
  });
}

/**
 * POSTs `body` with Transfer-Encoding: chunked, one byte per HTTP chunk (the listener gets a
 * Buffer per byte however the bytes arrive), on a connection of its own; the raw answer.
 */
function sendByteChunks(url: string, body: string): Promise<string> {
  const { hostname, port, pathname } = new URL(url);
  const chunked = (text: string): Buffer =>
    Buffer.from(
      Array.from(text, (c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join(''),
    );
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(
      `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
        'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
    );
    let at = 0;
    const more = (): void => {
      while (at < body.length) {
        const part = chunked(body.slice(at, at + 4096));
        at += 4096;
        if (!socket.write(part)) {
          socket.once('drain', more);
          return;
        }
      }
      socket.write('0\r\n\r\n');
    };
    more();
  });
}

const ECHO_ARGS =
  '{ "policyId": 12345678901234567890, "ratio": 1.0, "q": "caf\\u00e9", "nested": {"list": [1, 2]} }';

describe.each(['fastify', 'node'])('/mcp served with MCP_HTTP_SERVER=%s', (kind) => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { MCP_HTTP_SERVER: kind },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('forwards the arguments byte for byte (the raw body is kept, never re-serialized)', async () => {
    const raw = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"svc.echo","arguments":${ECHO_ARGS}}}`;
    const answer = await postRaw(gateway.mcpUrl, raw);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.json.id).toBe(7);
    expect(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8')).toBe(ECHO_ARGS);
  });

  it('frames the answer as one SSE event for a client that accepts only text/event-stream', async () => {
    const answer = await send(
      gateway.mcpUrl,
      'POST',
      { 'content-type': 'application/json', accept: 'text/event-stream' },
      '{"jsonrpc":"2.0","id":3,"method":"ping"}',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.body).toBe('event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n');
  });

  it('answers a notification 202 with no body', async () => {
    const answer = await send(
      gateway.mcpUrl,
      'POST',
      STANDARD_HEADERS,
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    );
    expect([answer.status, answer.body]).toEqual([202, '']);
  });

  it.each([
    [
      'a body that is not JSON',
      { ...STANDARD_HEADERS },
      '{"jsonrpc":',
      400,
      -32700,
      'Parse error: the body is not valid JSON',
    ],
    [
      'a body of more than 250,000 JSON values',
      { ...STANDARD_HEADERS },
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc.echo","arguments":{"rows":[${'0,'.repeat(250_000)}0]}}}`,
      400,
      -32600,
      'Invalid Request: the body holds more than 250000 JSON values',
    ],
    [
      'a body that is not UTF-8',
      { ...STANDARD_HEADERS },
      Buffer.from([0x7b, 0xff, 0x7d]),
      400,
      -32700,
      'Parse error: the body is not valid UTF-8',
    ],
    [
      'Content-Type text/plain',
      { 'content-type': 'text/plain', accept: 'application/json' },
      '{}',
      415,
      -32000,
      'Unsupported Media Type: Content-Type must be application/json',
    ],
    [
      'a body with Content-Encoding gzip',
      { ...STANDARD_HEADERS, 'content-encoding': 'gzip' },
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      415,
      -32000,
      'Unsupported Media Type: Content-Encoding gzip is not accepted; send the body without a content coding',
    ],
    [
      'Accept text/html',
      { 'content-type': 'application/json', accept: 'text/html' },
      '{}',
      406,
      -32000,
      'Not Acceptable: the client must accept application/json or text/event-stream',
    ],
  ])('refuses %s with the transport error', async (_what, headers, body, status, code, message) => {
    const answer = await send(gateway.mcpUrl, 'POST', headers, body);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual({ jsonrpc: '2.0', id: null, error: { code, message } });
  });

  it.each(['GET', 'PUT'])('answers %s /mcp with 405 and Allow: POST', async (method) => {
    const answer = await send(gateway.mcpUrl, method, {});
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('POST');
    expect(JSON.parse(answer.body).error.message).toBe('Method Not Allowed: use POST');
  });

  it('answers DELETE /mcp without Mcp-Session-Id with 400 and a JSON-RPC error (it ends the session it names)', async () => {
    const answer = await send(gateway.mcpUrl, 'DELETE', {});
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('answers any other path 404', async () => {
    const answer = await send(
      gateway.mcpUrl.replace('/mcp', '/other'),
      'POST',
      STANDARD_HEADERS,
      '{}',
    );
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.message).toBe('Not Found: the MCP endpoint is POST /mcp');
  });

  it('reads a 2 MiB body sent one byte per HTTP chunk whole, at about what its bytes cost', async () => {
    // each 1-byte chunk reaches the listener as a Buffer of its own: kept one by one they cost
    // ~100 bytes a byte (about 1.3 GB of RSS for 3 MiB), joined as they come a few MB
    const args = `{"pad":"${'x'.repeat(2 * 1024 * 1024)}","n":1}`;
    const raw = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"svc.echo","arguments":${args}}}`;
    const before = await gateway.residentMb();
    const answer = await sendByteChunks(gateway.mcpUrl, raw);
    expect(answer.split('\r\n', 1)[0]).toBe('HTTP/1.1 200 OK');
    expect(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8')).toBe(args);
    expect((await gateway.residentMb()) - before).toBeLessThan(250);
  });

  it('refuses a chunked body that grows over 4 MiB with 413, and closes the connection', async () => {
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const answer = await new Promise<Plain>((resolve, reject) => {
      const req = request(
        gateway.mcpUrl,
        { method: 'POST', headers: { ...STANDARD_HEADERS, 'transfer-encoding': 'chunked' } },
        (res) => {
          plainOf(res).then((plain) => {
            resolve(plain);
            req.destroy();
          }, reject);
        },
      );
      // the gateway answers and closes while this side still writes: not a failure here
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
      });
      req.write('{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"pad":"');
      let sent = 0;
      const more = (): void => {
        while (sent < 5 * 1024 * 1024 && !req.destroyed) {
          sent += piece.length;
          if (!req.write(piece)) {
            req.once('drain', more);
            return;
          }
        }
      };
      more();
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body).error.message).toBe(
      'Payload Too Large: the body exceeds 4194304 bytes',
    );
  });

  it.each([
    [
      'Content-Length beside Transfer-Encoding',
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'HTTP/1.1 400 Bad Request',
    ],
    [
      'a header section over 16 KiB',
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
      'HTTP/1.1 431 Request Header Fields Too Large',
    ],
    ['a request line of no HTTP version', 'POST /mcp HTTP/9\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
  ])(
    'answers a request the HTTP parser refuses (%s) with the status line alone, then closes',
    async (_what, request, status) => {
      const { port } = new URL(gateway.mcpUrl);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(request);
      });
      expect(answer).toBe(`${status}\r\nConnection: close\r\n\r\n`);
    },
  );

  it('refuses a declared body over 4 MiB with 413 before reading it, and closes the connection', async () => {
    const answer = await send(gateway.mcpUrl, 'POST', {
      ...STANDARD_HEADERS,
      'content-length': String(4 * 1024 * 1024 + 1),
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body).error.message).toBe(
      'Payload Too Large: the body exceeds 4194304 bytes',
    );
  });
});

describe('MCP_HTTP_SERVER', () => {
  it('stops the boot with one line when it names no listener', async () => {
    const gateway = GatewayProcess.spawn({ env: { MCP_HTTP_SERVER: 'express' } });
    expect(await gateway.waitForExit()).toBe(1);
    expect(gateway.output).toContain(
      'MCP_HTTP_SERVER: must be one of fastify, node (got "express")',
    );
    expect(gateway.output).toContain('The gateway did not start.');
  });
});
