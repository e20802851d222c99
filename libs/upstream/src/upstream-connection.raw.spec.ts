import type http from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  brotliCompressSync,
  constants as zlib,
  createGzip,
  deflateSync,
  gzipSync,
} from 'node:zlib';
import { Agent } from 'undici';
import { TestServer, parseJsonBody, sendJson, type TestHandler } from './testing/test-server';
import { UpstreamConnection } from './upstream-connection';
import {
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamEndpoint,
  type UpstreamProtocol,
} from './upstream-types';

/**
 * UpstreamConnection against hand-made node:http upstreams on 127.0.0.1: broken answers,
 * limits, the probe's classification, SSE framing, headers, and failure messages that name
 * no address.
 */

const DISCOVER_RESULT = {
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {} },
  resultType: 'complete',
  ttlMs: 0,
  cacheScope: 'private',
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'raw', version: '1' } },
};

function endpoint(
  url: string,
  protocol: UpstreamProtocol = 'auto',
  maxAnswerBytes = 64 * 1024,
): UpstreamEndpoint {
  return {
    id: 'raw',
    url,
    protocol,
    connectMillis: 1000,
    maxAnswerBytes,
    clientInfo: { name: 'gw', version: '1' },
    clientCapabilities: { elicitation: { form: {} } },
  };
}

function bodyOf(raw: Buffer): any {
  return parseJsonBody(raw);
}

function seen(server: TestServer): any[] {
  return server.seen;
}

function posts(server: TestServer, method?: string): any[] {
  return server.posts(method);
}

/** A 2026 upstream: discover answered, everything else by `rest`. */
function modern(
  rest: (req: http.IncomingMessage, res: http.ServerResponse, body: any) => unknown,
): TestHandler {
  return (req, res, raw) => {
    const body = bodyOf(raw);
    if (body?.method === 'server/discover') {
      sendJson(res, 200, { jsonrpc: '2.0', id: body.id, result: DISCOVER_RESULT });
      return undefined;
    }
    return rest(req, res, body);
  };
}

/** A 2025 upstream without sessions: discover refused, initialize answered, rest by `rest`. */
function legacy(
  rest: (req: http.IncomingMessage, res: http.ServerResponse, body: any) => unknown,
  sessionId?: string,
): TestHandler {
  return (req, res, raw) => {
    const body = bodyOf(raw);
    if (body?.method === 'server/discover') {
      sendJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        error: { code: -32601, message: 'Method not found' },
      });
      return undefined;
    }
    if (body?.method === 'initialize') {
      const text = JSON.stringify({
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'raw-legacy', version: '1' },
        },
      });
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(sessionId !== undefined && { 'mcp-session-id': sessionId }),
      });
      res.end(text);
      return undefined;
    }
    if (req.method === 'POST' && body !== undefined && body.id === undefined) {
      res.writeHead(202);
      res.end();
      return undefined;
    }
    return rest(req, res, body);
  };
}

/** GET and DELETE not offered (405), as a stateless 2025 server answers them. */
function noStream(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(405, { allow: 'POST' });
  res.end();
}

async function failureOf(promise: Promise<unknown>): Promise<UpstreamFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamFailure) return err;
    throw err;
  }
  throw new Error('expected an UpstreamFailure');
}

function expectNoAddress(failure: UpstreamFailure, port: number): void {
  expect(failure.message).not.toContain('127.0.0.1');
  expect(failure.message).not.toContain(String(port));
  expect(failure.message).not.toContain('http://');
}

async function eventually(check: () => boolean, millis = 3000): Promise<void> {
  const end = Date.now() + millis;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('UpstreamConnection against raw HTTP upstreams', () => {
  let agent: Agent;
  const connections: UpstreamConnection[] = [];
  const servers: TestServer[] = [];

  function connection(
    url: string,
    protocol: UpstreamProtocol = 'auto',
    maxAnswerBytes?: number,
  ): UpstreamConnection {
    const c = new UpstreamConnection(endpoint(url, protocol, maxAnswerBytes), agent);
    connections.push(c);
    return c;
  }

  async function serve(handler: TestHandler): Promise<TestServer> {
    const server = await TestServer.start(handler);
    servers.push(server);
    return server;
  }

  beforeAll(() => {
    agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: 1000 } });
  });

  afterEach(async () => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  afterAll(async () => {
    await agent.close();
  });

  describe('failures, and messages without the address', () => {
    it('garbage body → bad-answer', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('this is not JSON-RPC');
      });
      for (const protocol of ['auto', '2025-11-25', '2026-07-28'] as const) {
        const failure = await failureOf(
          connection(server.url, protocol).connect({ deadlineMillis: 2000 }),
        );
        expect(failure.kind).toBe('bad-answer');
        expectNoAddress(failure, server.port);
      }
    });

    it('an answer head over the HTTP client\'s header limit → bad-answer, never "could not be reached"', async () => {
      // the upstream was reached and answered: a call it ran must not read as one never sent
      const huge: Record<string, string> = {};
      for (let i = 0; i < 20; i++) huge[`x-filler-${i}`] = 'v'.repeat(4000);
      const server = await serve(
        modern((_req, res, body) => {
          res.writeHead(200, { 'content-type': 'application/json', ...huge });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: body?.id, result: {} }));
        }),
      );
      const live = connection(server.url);
      await live.connect({ deadlineMillis: 2000 });
      const failure = await failureOf(
        live.request('tools/call', { name: 't' }, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
      expect(failure.message).toMatch(/head|header/);
      expectNoAddress(failure, server.port);
    });

    it('a JSON answer over maxAnswerBytes → too-large', async () => {
      const server = await serve(
        modern((_req, res, body) => {
          sendJson(res, 200, { jsonrpc: '2.0', id: body.id, result: { pad: 'x'.repeat(100_000) } });
        }),
      );
      const c = connection(server.url);
      const failure = await failureOf(c.request('tools/list', undefined, { deadlineMillis: 2000 }));
      expect(failure.kind).toBe('too-large');
      expect(failure.message).toContain(String(64 * 1024));
      expectNoAddress(failure, server.port);
    });

    it('an endless SSE answer is cut at maxAnswerBytes, at once', async () => {
      let closed = false;
      const server = await serve(
        modern((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const event = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'y'.repeat(1000) } })}\n\n`;
          const timer = setInterval(() => res.write(event), 1);
          res.on('close', () => {
            closed = true;
            clearInterval(timer);
          });
        }),
      );
      const c = connection(server.url);
      let relayed = 0;
      const failure = await failureOf(
        c.request(
          'tools/call',
          { name: 't' },
          { deadlineMillis: 10_000, onMessage: () => relayed++ },
        ),
      );
      expect(failure.kind).toBe('too-large');
      expect(relayed).toBeGreaterThan(10);
      expect(relayed).toBeLessThan(70);
      await eventually(() => closed);
    });

    it('no answer before the deadline → timeout, the request aborted', async () => {
      let closed = false;
      const server = await serve(
        modern((_req, res) => {
          res.on('close', () => {
            closed = true;
          });
        }),
      );
      const c = connection(server.url);
      await c.connect({ deadlineMillis: 2000 });
      const started = Date.now();
      const failure = await failureOf(c.request('tools/list', undefined, { deadlineMillis: 300 }));
      expect(failure.kind).toBe('timeout');
      expect(failure.message).toBe('the upstream did not answer within 300 ms');
      expect(Date.now() - started).toBeLessThan(1500);
      expectNoAddress(failure, server.port);
      await eventually(() => closed);
    });

    it('500 without a body during detection → http-status 500, no fallback; the next connect retries', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(500);
        res.end();
      });
      const c = connection(server.url);
      const failure = await failureOf(c.connect({ deadlineMillis: 2000 }));
      expect(failure.kind).toBe('http-status');
      expect(failure.status).toBe(500);
      expectNoAddress(failure, server.port);
      expect(posts(server, 'initialize')).toHaveLength(0);
      await failureOf(c.connect({ deadlineMillis: 2000 }));
      expect(posts(server, 'server/discover')).toHaveLength(2);
    });

    it('a request answered 502 without a body → http-status 502', async () => {
      const server = await serve(
        modern((_req, res) => {
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<h1>Bad gateway</h1>');
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('http-status');
      expect(failure.status).toBe(502);
      expectNoAddress(failure, server.port);
    });

    it('connection refused → unreachable', async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      const c = connection(`http://127.0.0.1:${port}/mcp`);
      const failure = await failureOf(c.request('tools/list', undefined, { deadlineMillis: 2000 }));
      expect(failure.kind).toBe('unreachable');
      expect(failure.message).toContain('ECONNREFUSED');
      expectNoAddress(failure, port);
    });

    it('401 on the probe → http-status 401, no fallback', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(401, { 'www-authenticate': 'Bearer resource_metadata="x"' });
        res.end();
      });
      const failure = await failureOf(connection(server.url).connect({ deadlineMillis: 2000 }));
      expect(failure.kind).toBe('http-status');
      expect(failure.status).toBe(401);
      expect(posts(server, 'initialize')).toHaveLength(0);
    });

    it('an already aborted signal → cancelled, nothing sent', async () => {
      const server = await serve(modern(() => undefined));
      const abort = new AbortController();
      abort.abort();
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, {
          deadlineMillis: 2000,
          signal: abort.signal,
        }),
      );
      expect(failure.kind).toBe('cancelled');
      expect(server.seen).toHaveLength(0);
    });

    it('an SSE stream that ends without the response → bad-answer', async () => {
      const server = await serve(
        modern((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(
            `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: {} })}\n\n`,
          );
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
      expect(failure.message).toContain('ended without the response');
    });

    it('a JSON response to another id → bad-answer', async () => {
      const server = await serve(
        modern((_req, res) => {
          sendJson(res, 200, { jsonrpc: '2.0', id: 'not-yours', result: {} });
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
    });
  });

  describe('era detection', () => {
    it('-32022 naming a version we speak → one retry with it, then 2026', async () => {
      let probes = 0;
      const server = await serve((_req, res, raw) => {
        const body = bodyOf(raw);
        if (body?.method === 'server/discover' && ++probes === 1) {
          sendJson(res, 400, {
            jsonrpc: '2.0',
            id: body.id,
            error: {
              code: -32022,
              message: 'Unsupported protocol version: 2026-07-28',
              data: { supported: ['2026-07-28'], requested: '2026-07-28' },
            },
          });
          return;
        }
        sendJson(res, 200, { jsonrpc: '2.0', id: body?.id, result: DISCOVER_RESULT });
      });
      const c = connection(server.url);
      await c.connect({ deadlineMillis: 2000 });
      expect(c.era).toBe('2026');
      expect(c.serverInfo).toEqual({ name: 'raw', version: '1' });
      expect(posts(server, 'server/discover').map((b) => b.id)).toEqual([
        'server-discover-probe-1',
        'server-discover-probe-2',
      ]);
    });

    it('-32022 listing only legacy versions → initialize', async () => {
      const server = await serve((req, res, raw) => {
        const body = bodyOf(raw);
        if (body?.method === 'server/discover') {
          sendJson(res, 400, {
            jsonrpc: '2.0',
            id: body.id,
            error: {
              code: -32022,
              message: 'no',
              data: { supported: ['2025-11-25'], requested: '2026-07-28' },
            },
          });
          return undefined;
        }
        return legacy(noStream)(req, res, raw);
      });
      const c = connection(server.url);
      await c.connect({ deadlineMillis: 2000 });
      expect(c.era).toBe('2025');
    });

    it('-32022 listing only unknown modern versions → era-mismatch', async () => {
      const server = await serve((_req, res, raw) => {
        const body = bodyOf(raw);
        sendJson(res, 400, {
          jsonrpc: '2.0',
          id: body?.id,
          error: {
            code: -32022,
            message: 'no',
            data: { supported: ['2099-01-01'], requested: '2026-07-28' },
          },
        });
      });
      const failure = await failureOf(connection(server.url).connect({ deadlineMillis: 2000 }));
      expect(failure.kind).toBe('era-mismatch');
      expect(posts(server, 'initialize')).toHaveLength(0);
    });

    it('200 -32601 on the probe → initialize (a legacy server without the method)', async () => {
      const server = await serve(legacy(noStream, 'sess-1'));
      const c = connection(server.url);
      await c.connect({ deadlineMillis: 2000 });
      expect(c.era).toBe('2025');
      expect(c.sessionId).toBe('sess-1');
    });

    it('404 without a body on the probe → initialize', async () => {
      const server = await serve((req, res, raw) => {
        const body = bodyOf(raw);
        if (body?.method === 'server/discover') {
          res.writeHead(404);
          res.end();
          return undefined;
        }
        return legacy(noStream)(req, res, raw);
      });
      const c = connection(server.url);
      await c.connect({ deadlineMillis: 2000 });
      expect(c.era).toBe('2025');
    });

    it('pinned 2026 with a valid DiscoverResult → 2026 without initialize', async () => {
      const server = await serve(modern(() => undefined));
      const c = connection(server.url, '2026-07-28');
      await c.connect({ deadlineMillis: 2000 });
      expect(c.era).toBe('2026');
      expect(posts(server, 'initialize')).toHaveLength(0);
    });

    it('initialize answered with an unknown protocol version → era-mismatch', async () => {
      const server = await serve((_req, res, raw) => {
        const body = bodyOf(raw);
        sendJson(res, 200, {
          jsonrpc: '2.0',
          id: body?.id,
          result: {
            protocolVersion: '1999-01-01',
            capabilities: {},
            serverInfo: { name: 'x', version: '1' },
          },
        });
      });
      const failure = await failureOf(
        connection(server.url, '2025-11-25').connect({ deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('era-mismatch');
    });
  });

  describe('answers', () => {
    it('a non-2xx JSON-RPC error is an error answer: code, message and data unchanged', async () => {
      const error = {
        code: -32021,
        message: 'Cannot request input',
        data: { requiredCapabilities: { elicitation: { form: {} } } },
      };
      const server = await serve(
        modern((_req, res, body) => sendJson(res, 400, { jsonrpc: '2.0', id: body.id, error })),
      );
      const answer = await connection(server.url).request(
        'tools/call',
        { name: 'x' },
        { deadlineMillis: 2000 },
      );
      // a 2026 server's: -32021 is MissingRequiredClientCapability there (wire notes §5)
      expect(answer).toEqual({ kind: 'error', ...error, era: '2026' });
    });

    it('a notification stream (a listen) is capped per event, and drops a notification too deep, not the stream', async () => {
      const update = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'x://r' },
      });
      const deep = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}}`;
      const server = await serve(
        modern(async (_req, res, body) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          // 400 updates of ~90 bytes, apart in time as a server sends them: over the 16 KiB cap
          // together, each far under it
          for (let i = 0; i < 400; i++) {
            if (i === 200) res.write(`data: ${deep}\n\n`);
            res.write(`data: ${update}\n\n`);
            if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5));
          }
          res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} })}\n\n`);
        }),
      );
      const listen = (notificationStream: boolean): Promise<unknown> => {
        const messages: JsonRpcMessage[] = [];
        return connection(server.url, 'auto', 16 * 1024)
          .request(
            'subscriptions/listen',
            { notifications: {} },
            { deadlineMillis: 2000, onMessage: (m) => messages.push(m), notificationStream },
          )
          .then((answer) => ({ answer, updates: messages.length }));
      };
      await expect(listen(true)).resolves.toEqual({
        answer: { kind: 'result', result: {}, resultText: '{}', era: '2026' },
        updates: 400,
      });
      // any other request's answer is one answer, capped whole
      expect((await failureOf(listen(false))).kind).toBe('too-large');
    });

    it('SSE framing: priming event, retry:, comments, byte-by-byte chunks, other messages in order (a 2026 request among them dropped)', async () => {
      const server = await serve(
        modern(async (_req, res, body) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const frames =
            'id: 0\ndata:\n\n' +
            'retry: 5000\n\n' +
            ': keepalive\n\n' +
            `event: message\nid: 1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'a', progress: 1 } })}\n\n` +
            `data: ${JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' })}\n\n` +
            `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'Zürich 🌍' } })}\r\n\r\n` +
            `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: [{ type: 'text', text: 'ok ✓' }] } })}\n\n`;
          const bytes = Buffer.from(frames, 'utf8');
          for (let i = 0; i < bytes.length; i += 7) {
            res.write(bytes.subarray(i, i + 7));
            if (i % 70 === 0) await new Promise((r) => setImmediate(r));
          }
          res.end();
        }),
      );
      const messages: JsonRpcMessage[] = [];
      const answer = await connection(server.url).request(
        'tools/call',
        { name: 't' },
        { deadlineMillis: 2000, onMessage: (m) => messages.push(m) },
      );
      expect(answer).toEqual({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'ok ✓' }] },
        resultText: '{"content":[{"type":"text","text":"ok ✓"}]}',
        era: '2026',
      });
      // a 2026 server's request (roots/list) is none of the caller's: that revision has none
      expect(messages.map((m) => m.method)).toEqual([
        'notifications/progress',
        'notifications/message',
      ]);
      expect((messages[1]!.params as any).data).toBe('Zürich 🌍');
    });

    it('a ping on a request stream is answered by the connection; a list_changed there also reaches the unsolicited listeners', async () => {
      const server = await serve(
        legacy((req, res, body) => {
          if (req.method !== 'POST') return noStream(req, res);
          if (body?.method === undefined) {
            // our answer to the ping
            res.writeHead(202);
            res.end();
            return undefined;
          }
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', id: 'srv-ping', method: 'ping' })}\n\n`,
          );
          res.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`,
          );
          res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} })}\n\n`);
          return undefined;
        }),
      );
      const c = connection(server.url);
      const unsolicited: JsonRpcMessage[] = [];
      c.onUnsolicited((m) => unsolicited.push(m));
      const messages: JsonRpcMessage[] = [];
      const answer = await c.request(
        'tools/call',
        { name: 't' },
        { deadlineMillis: 2000, onMessage: (m) => messages.push(m) },
      );
      expect(answer).toEqual({ kind: 'result', result: {}, resultText: '{}', era: '2025' });
      expect(messages.map((m) => m.method)).toEqual(['notifications/tools/list_changed']);
      expect(unsolicited.map((m) => m.method)).toEqual(['notifications/tools/list_changed']);
      await eventually(() =>
        seen(server).some(
          (r) => r.body?.id === 'srv-ping' && JSON.stringify(r.body?.result) === '{}',
        ),
      );
    });

    it('an SSE event that is not JSON-RPC → bad-answer', async () => {
      const server = await serve(
        modern((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: {not json\n\n');
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
    });
  });

  describe('content codings (an upstream behind a CDN; RFC 9110 §8.4)', () => {
    const RESULT = { content: [{ type: 'text', text: 'coded ✓' }] };
    const answerOf = (id: unknown): string =>
      JSON.stringify({ jsonrpc: '2.0', id, result: RESULT });

    it.each([
      ['gzip', (b: Buffer) => gzipSync(b)],
      ['x-gzip', (b: Buffer) => gzipSync(b)],
      ['deflate', (b: Buffer) => deflateSync(b)],
      ['br', (b: Buffer) => brotliCompressSync(b)],
      ['gzip, br', (b: Buffer) => brotliCompressSync(gzipSync(b))],
    ])('a JSON answer coded %s is decoded, in both eras', async (coding, encode) => {
      for (const era of ['2026', '2025'] as const) {
        const reply = (res: http.ServerResponse, body: any): void => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
          res.end(encode(Buffer.from(answerOf(body.id))));
        };
        const server = await serve(
          era === '2026'
            ? modern((_q, res, body) => reply(res, body))
            : legacy((req, res, body) =>
                req.method === 'POST' ? reply(res, body) : noStream(req, res),
              ),
        );
        const answer = await connection(server.url).request(
          'tools/call',
          { name: 't' },
          { deadlineMillis: 2000 },
        );
        expect(answer).toMatchObject({ kind: 'result', result: RESULT });
      }
    });

    it('a gzip SSE stream is decoded as its events arrive: a notification before the answer', async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const server = await serve(
        modern(async (_req, res, body) => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
          const gzip = createGzip({ flush: zlib.Z_SYNC_FLUSH });
          gzip.pipe(res);
          gzip.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n\n`,
          );
          await released;
          gzip.end(`data: ${answerOf(body.id)}\n\n`);
        }),
      );
      const messages: JsonRpcMessage[] = [];
      const answer = connection(server.url).request(
        'tools/call',
        { name: 't' },
        {
          deadlineMillis: 3000,
          onMessage: (m) => {
            messages.push(m);
            release();
          },
        },
      );
      await expect(answer).resolves.toMatchObject({ kind: 'result', result: RESULT });
      expect(messages.map((m) => m.method)).toEqual(['notifications/progress']);
    });

    it('a coding it does not know fails with that coding named', async () => {
      const server = await serve(
        modern((_req, res, body) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
          res.end(answerOf(body.id));
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
      expect(failure.message).toContain('unsupported content-encoding "zstd"');
      expectNoAddress(failure, server.port);
    });

    it('corrupt gzip → bad-answer naming the coding', async () => {
      const server = await serve(
        modern((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(Buffer.from('not gzip at all'));
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('bad-answer');
      expect(failure.message).toContain('gzip data is corrupt or cut short');
    });

    it('the cap holds on the decoded bytes: a small gzip of a big answer → too-large', async () => {
      const server = await serve(
        modern((_req, res, body) => {
          const big = JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { pad: ' '.repeat(2_000_000) },
          });
          const packed = gzipSync(Buffer.from(big));
          expect(packed.length).toBeLessThan(64 * 1024);
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(packed);
        }),
      );
      const failure = await failureOf(
        connection(server.url).request('tools/list', undefined, { deadlineMillis: 2000 }),
      );
      expect(failure.kind).toBe('too-large');
      expect(failure.message).toContain(String(64 * 1024));
    });
  });

  describe('a request stream the upstream closes before the response (SSE polling)', () => {
    const RESULT = { content: [{ type: 'text', text: 'resumed' }] };
    const resumes = (server: TestServer): any[] =>
      seen(server).filter((r) => r.method === 'GET' && r.headers['last-event-id'] !== undefined);

    /**
     * A 2025 upstream: the POST's stream primes id p-0, sends `retry`, then ends; a GET with
     * Last-Event-ID is answered by `onGet`.
     */
    function polling(
      retry: number,
      onGet: (req: http.IncomingMessage, res: http.ServerResponse, postId: unknown) => void,
    ): TestHandler {
      let postId: unknown;
      return legacy((req, res, body) => {
        // the session's own GET stream (no Last-Event-ID) and DELETE are not offered
        if (req.method === 'GET' && req.headers['last-event-id'] !== undefined)
          return onGet(req, res, postId);
        if (req.method !== 'POST') return noStream(req, res);
        postId = body.id;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`id: p-0\nretry: ${retry}\ndata:\n\n`);
        return undefined;
      }, 'sid-1');
    }

    it('is resumed with GET and Last-Event-ID, with the session id, after retry ms', async () => {
      const server = await serve(
        polling(50, (req, res, postId) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(
            `id: p-1\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: postId, result: RESULT })}\n\n`,
          );
        }),
      );
      const answer = await connection(server.url, '2025-11-25').request(
        'tools/call',
        { name: 't' },
        { deadlineMillis: 3000 },
      );
      expect(answer).toMatchObject({ kind: 'result', result: RESULT });
      const get = resumes(server)[0];
      expect(get?.headers['last-event-id']).toBe('p-0');
      expect(get?.headers['mcp-session-id']).toBe('sid-1');
      expect(get?.headers.accept).toBe('text/event-stream');
    });

    it('a GET answered 405 leaves the answer ended without the response', async () => {
      const server = await serve(polling(20, (req, res) => noStream(req, res)));
      const failure = await failureOf(
        connection(server.url, '2025-11-25').request(
          'tools/call',
          { name: 't' },
          { deadlineMillis: 3000 },
        ),
      );
      expect(failure.message).toContain('ended without the response');
      expect(resumes(server)).toHaveLength(1);
    });

    it('a retry longer than the deadline is not waited for', async () => {
      const server = await serve(polling(60_000, (req, res) => noStream(req, res)));
      const started = Date.now();
      const failure = await failureOf(
        connection(server.url, '2025-11-25').request(
          'tools/call',
          { name: 't' },
          { deadlineMillis: 2000 },
        ),
      );
      expect(failure.message).toContain('ended without the response');
      expect(resumes(server)).toHaveLength(0);
      expect(Date.now() - started).toBeLessThan(60_000);
    });

    it('streams that bring nothing new are resumed at most three times', async () => {
      const server = await serve(
        polling(10, (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(': nothing new\n\n');
        }),
      );
      const failure = await failureOf(
        connection(server.url, '2025-11-25').request(
          'tools/call',
          { name: 't' },
          { deadlineMillis: 5000 },
        ),
      );
      expect(failure.message).toContain('ended without the response');
      expect(resumes(server)).toHaveLength(3);
    });
  });

  describe('headers and envelope (2026)', () => {
    it('sets the MCP headers, the base64 sentinel, keeps caller _meta, drops caller Host and owned headers', async () => {
      const server = await serve(
        modern((_req, res, body) =>
          sendJson(res, 200, { jsonrpc: '2.0', id: body.id, result: {} }),
        ),
      );
      const c = connection(server.url);
      await c.request(
        'tools/call',
        {
          name: 'Zürich ',
          arguments: { a: 1 },
          _meta: {
            progressToken: 'tok',
            'io.modelcontextprotocol/protocolVersion': '1999-01-01',
            traceparent: '00-abc',
          },
        },
        {
          deadlineMillis: 2000,
          headers: {
            authorization: 'Bearer secret',
            host: 'evil.example',
            'mcp-session-id': 'stale',
            'mcp-method': 'wrong',
            'mcp-param-region': 'eu',
            'x-request-id': 'r-1',
          },
        },
      );
      const sent = seen(server).find((s) => s.body?.method === 'tools/call');
      expect(sent.headers).toMatchObject({
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': '=?base64?WsO8cmljaCA=?=',
        authorization: 'Bearer secret',
        'mcp-param-region': 'eu',
        'x-request-id': 'r-1',
        host: `127.0.0.1:${server.port}`,
      });
      expect(sent.headers['mcp-session-id']).toBeUndefined();
      expect(sent.body.id).toEqual(expect.any(Number));
      expect(sent.body.params).toEqual({
        name: 'Zürich ',
        arguments: { a: 1 },
        _meta: {
          // the gateway's own token: the caller's is no upstream's business (progress-token.ts)
          progressToken: sent.body.id,
          traceparent: '00-abc',
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          'io.modelcontextprotocol/clientInfo': { name: 'gw', version: '1' },
        },
      });
    });
  });

  describe('the 2025 standalone GET stream', () => {
    it('is re-opened (with Last-Event-ID) when it drops while the session lives', async () => {
      let gets = 0;
      const server = await serve(
        legacy((req, res) => {
          if (req.method === 'GET') {
            gets++;
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.end(
              `id: ev-${gets}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { n: gets } })}\n\n`,
            );
            return;
          }
          if (req.method === 'DELETE') {
            res.writeHead(200);
            res.end();
          }
        }, 'sess-9'),
      );
      const c = new UpstreamConnection(
        { ...endpoint(server.url), sessionHeaders: () => ({ authorization: 'Bearer s' }) },
        agent,
      );
      connections.push(c);
      const got: Array<{ n: unknown; sessionId?: string }> = [];
      c.onUnsolicited((m, context) =>
        got.push({ n: (m.params as any).n, sessionId: context.sessionId }),
      );
      await c.connect({ deadlineMillis: 2000 });
      await eventually(() => got.length >= 3);
      expect(got.slice(0, 3)).toEqual([
        { n: 1, sessionId: 'sess-9' },
        { n: 2, sessionId: 'sess-9' },
        { n: 3, sessionId: 'sess-9' },
      ]);
      const getsSeen = seen(server).filter((s) => s.method === 'GET');
      expect(getsSeen[0].headers['last-event-id']).toBeUndefined();
      expect(getsSeen[1].headers['last-event-id']).toBe('ev-1');
      expect(getsSeen[1].headers.authorization).toBe('Bearer s');
      await c.close();
      const after = gets;
      await new Promise((r) => setTimeout(r, 600));
      expect(gets).toBe(after);
      expect(seen(server).find((s) => s.method === 'DELETE')?.headers['mcp-session-id']).toBe(
        'sess-9',
      );
    });

    it('a 2025 request answered 500 without a body → http-status, the session kept', async () => {
      const server = await serve(
        legacy((req, res) => {
          if (req.method === 'GET') {
            res.writeHead(405);
            res.end();
            return;
          }
          res.writeHead(500);
          res.end();
        }, 'sess-2'),
      );
      const c = connection(server.url);
      const failure = await failureOf(c.request('tools/list', undefined, { deadlineMillis: 2000 }));
      expect(failure.kind).toBe('http-status');
      expect(failure.status).toBe(500);
      expect(c.sessionId).toBe('sess-2');
    });
  });
});
