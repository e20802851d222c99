import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { warmUpToolServiceClient } from './client-warm-up';
import { ToolServiceClient, type ToolServiceRequest } from './tool-service-client';

const deep = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

/** A Tool Service on 127.0.0.1 answering `/{name}` with ANSWERS[name] as application/json. */
async function answering(answers: Record<string, string>): Promise<{
  origin: string;
  close: () => Promise<void>;
}> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = Buffer.from(answers[(req.url ?? '/').slice(1)] ?? '{}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('ToolServiceClient: answers nested too deep (docs/operations.md §2 "Calls nobody waits for")', () => {
  let service: Awaited<ReturnType<typeof answering>>;
  let client: ToolServiceClient;
  const request = (name: string): ToolServiceRequest => ({
    origin: service.origin,
    path: `/${name}`,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMillis: 5000,
    maxResponseBytes: 8 * 1024 * 1024,
    maxJsonDepth: 128,
  });

  beforeAll(async () => {
    service = await answering({
      deep: deep(3 * 1024 * 1024),
      limit: deep(128),
      plain: '{"content":[{"type":"text","text":"ok"}]}',
    });
    client = new ToolServiceClient(1000, 8);
  });
  afterAll(async () => {
    await client.destroy();
    await service.close();
  });

  it('ends a 6 MB answer of nested brackets as too-deep, unjoined', async () => {
    expect(await client.post(request('deep'))).toEqual({ kind: 'too-deep', limit: 128 });
  });

  it('accepts 128 levels and plain answers, byte for byte, after refusing deep ones', async () => {
    const answers = await Promise.all([
      client.post(request('deep')),
      client.post(request('limit')),
      client.post(request('plain')),
    ]);
    expect(answers[0]).toEqual({ kind: 'too-deep', limit: 128 });
    expect('body' in answers[1] && answers[1].body.toString()).toBe(deep(128));
    expect('body' in answers[2] && answers[2].body.toString()).toBe(
      '{"content":[{"type":"text","text":"ok"}]}',
    );
  });
});

describe('ToolServiceClient: what a broken connection is said to be', () => {
  it('a service that takes the request and closes without answering may have run it; a closed port was never reached', async () => {
    const server: Server = createServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const client = new ToolServiceClient(1000, 8);
    const request = (origin: string): ToolServiceRequest => ({
      origin,
      path: '/tool',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      timeoutMillis: 5000,
      maxResponseBytes: 1024,
    });
    try {
      expect(await client.post(request(`http://127.0.0.1:${port}`))).toEqual({
        kind: 'connect',
        code: 'UND_ERR_SOCKET',
        mayHaveRun: true,
      });
      await new Promise<void>((r) => server.close(() => r()));
      expect(await client.post(request(`http://127.0.0.1:${port}`))).toEqual({
        kind: 'connect',
        code: 'ECONNREFUSED',
      });
    } finally {
      server.close();
      await client.destroy();
    }
  });

  it('small chunks of an answer are joined byte for byte', async () => {
    const text = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(20_000) }] });
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        let at = 0;
        const next = (): void => {
          if (at >= text.length) {
            res.end();
            return;
          }
          res.write(text.slice(at, at + 7), () => setImmediate(next));
          at += 7;
        };
        next();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new ToolServiceClient(1000, 8);
    try {
      const answer = await client.post({
        origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        path: '/tool',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        timeoutMillis: 20_000,
        maxResponseBytes: 1024 * 1024,
      });
      expect('body' in answer && answer.body.toString()).toBe(text);
    } finally {
      server.close();
      await client.destroy();
    }
  });
});

describe('warmUpToolServiceClient', () => {
  it('runs its calls on a loopback server of its own, then closes it', async () => {
    const report = await warmUpToolServiceClient({ calls: 6 });
    expect(report).toEqual({ calls: 6, elapsedMs: expect.any(Number), completed: true });
  });

  it('never throws, and gives up at its deadline', async () => {
    const report = await warmUpToolServiceClient({ deadlineMillis: 1 });
    expect(report.completed).toBe(false);
    expect(report.elapsedMs).toBeLessThan(1000);
  });
});
