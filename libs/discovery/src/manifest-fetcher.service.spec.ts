import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { HttpService } from '@nestjs/axios';
import axios from 'axios';
import type { GatewayConfig } from '@app/config';
import { McpConfig } from '@app/config';
import { ManifestFetcher, type FetchedManifest } from './manifest-fetcher.service';

const MANIFEST = Buffer.from(
  JSON.stringify({ bundleId: 'b', revision: 'r1', tools: [], note: 'café '.repeat(200) }),
);
const MAX_BYTES = 64 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Generous deadlines by default: a loaded CI machine must not turn another case into a
 * timeout; the timeout cases ask for short ones (quickFetcher).
 */
function config(connectTimeoutMillis = 5000, readTimeoutMillis = 4000): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw';
  mcp.discovery.connectTimeoutMillis = connectTimeoutMillis;
  mcp.discovery.readTimeoutMillis = readTimeoutMillis;
  mcp.discovery.maxManifestBytes = MAX_BYTES;
  return { mcp } as GatewayConfig;
}

/** ManifestFetcher over HttpService (its own axios instance) against a real HTTP server on 127.0.0.1. */
describe('ManifestFetcher: manifest pulls through @nestjs/axios (contract §4, §6; docs/operations.md §7; docs/architecture.md "Which Nest pieces carry what")', () => {
  let server: Server;
  let handler: Handler;
  let connections = 0;
  const requests: IncomingMessage[] = [];
  let fetcher: ManifestFetcher;
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req);
      handler(req, res);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool-manifest`;
  });

  beforeEach(() => {
    fetcher = new ManifestFetcher(new HttpService(axios.create()), config());
    requests.length = 0;
  });

  afterEach(() => fetcher.onModuleDestroy());

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const answer =
    (body: Buffer, headers: Record<string, string | number> = {}, status = 200): Handler =>
    (_req, res) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': body.length,
        ...headers,
      });
      res.end(body);
    };

  const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('base64url');

  it('pulls with Accept: application/json, advertises gzip, deflate and br, and returns the bytes with their digest', async () => {
    handler = answer(MANIFEST);
    expect(await fetcher.fetch(url)).toEqual({ ok: true, bytes: MANIFEST, digest: sha1(MANIFEST) });
    expect(requests[0]?.headers.accept).toBe('application/json');
    expect(requests[0]?.headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('says a 304 Not Modified is one: the copy held is current (contract §6)', async () => {
    handler = (_req, res) => {
      res.writeHead(304, { etag: '"r1"' });
      res.end();
    };
    expect(await fetcher.fetch(url)).toEqual({ ok: true, notModified: true });
  });

  it('accepts a gzip manifest, giving the decoded bytes and their digest', async () => {
    handler = answer(gzipSync(MANIFEST), { 'content-encoding': 'gzip' });
    expect(await fetcher.fetch(url)).toEqual({ ok: true, bytes: MANIFEST, digest: sha1(MANIFEST) });
  });

  it.each([
    ['deflate', deflateSync(MANIFEST)],
    ['br', brotliCompressSync(MANIFEST)],
    ['gzip, br', brotliCompressSync(gzipSync(MANIFEST))],
  ])('accepts a manifest encoded as "%s"', async (encoding, body) => {
    handler = answer(body, { 'content-encoding': encoding });
    expect(await fetcher.fetch(url)).toMatchObject({ ok: true, bytes: MANIFEST });
  });

  it('refuses a gzip bomb (10 MB of zeros) as ManifestTooLargeError, counting decoded bytes', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(MAX_BYTES); // only the decoded bytes are over the cap
    handler = answer(bomb, { 'content-encoding': 'gzip' });
    expect(await fetcher.fetch(url)).toEqual({
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `more than maxManifestBytes ${MAX_BYTES} bytes decoded`,
    });
  });

  it.each(['compress', 'zstd', 'x-foo'])(
    'refuses content-encoding %s as ManifestNotJsonError naming the encoding',
    async (encoding) => {
      handler = answer(MANIFEST, { 'content-encoding': encoding });
      const fetched = await fetcher.fetch(url);
      expect(fetched).toMatchObject({ ok: false, errorType: 'ManifestNotJsonError' });
      expect((fetched as { detail: string }).detail).toContain(`"${encoding}"`);
    },
  );

  it('refuses corrupt gzip data as ManifestNotJsonError', async () => {
    handler = answer(MANIFEST, { 'content-encoding': 'gzip' });
    expect(await fetcher.fetch(url)).toMatchObject({
      ok: false,
      errorType: 'ManifestNotJsonError',
      detail: expect.stringContaining('the gzip data is corrupt or cut short'),
    });
  });

  it('refuses an unencoded manifest over maxManifestBytes while streaming, and by Content-Length up front', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(Buffer.alloc(MAX_BYTES, 0x20));
      res.end(Buffer.alloc(1024, 0x20));
    };
    expect(await fetcher.fetch(url)).toMatchObject({
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `more than maxManifestBytes ${MAX_BYTES} bytes received`,
    });
    handler = answer(Buffer.alloc(MAX_BYTES + 1, 0x20));
    expect(await fetcher.fetch(url)).toMatchObject({
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `Content-Length ${MAX_BYTES + 1} > maxManifestBytes ${MAX_BYTES}`,
    });
  });

  it('classifies a non-2xx answer as ManifestHttpStatusError, and does not follow a redirect', async () => {
    handler = answer(Buffer.from('{"error":"deploying"}'), {}, 503);
    expect(await fetcher.fetch(url)).toEqual({
      ok: false,
      errorType: 'ManifestHttpStatusError',
      detail: 'HTTP 503',
    });
    handler = (req, res) => {
      if (req.url === '/tool-manifest') res.writeHead(302, { location: '/elsewhere' }).end();
      else answer(MANIFEST)(req, res);
    };
    expect(await fetcher.fetch(url)).toEqual({
      ok: false,
      errorType: 'ManifestHttpStatusError',
      detail: 'HTTP 302',
    });
    expect(requests.map((r) => r.url)).toEqual(['/tool-manifest', '/tool-manifest']);
  });

  /** A fetcher with connect 500 ms and read 400 ms, for the timeout cases; destroyed after use. */
  const quickFetcher = async <T>(use: (quick: ManifestFetcher) => Promise<T>): Promise<T> => {
    const quick = new ManifestFetcher(new HttpService(axios.create()), config(500, 400));
    try {
      return await use(quick);
    } finally {
      quick.onModuleDestroy();
    }
  };

  it('gives up with ManifestTimeoutError when no headers arrive within readTimeoutMillis', async () => {
    handler = (_req, res) => void setTimeout(() => answer(MANIFEST)(_req, res), 1500);
    expect(await quickFetcher((quick) => quick.fetch(url))).toEqual({
      ok: false,
      errorType: 'ManifestTimeoutError',
      detail: 'no complete answer within 400 ms',
    });
  });

  it('gives up with ManifestTimeoutError when the body drips past connect + read ms', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 100);
      res.on('close', () => clearInterval(drip));
    };
    expect(await quickFetcher((quick) => quick.fetch(url))).toMatchObject({
      ok: false,
      errorType: 'ManifestTimeoutError',
    });
  });

  it('classifies a refused connection as ManifestConnectError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await fetcher.fetch(`http://127.0.0.1:${port}/m`)).toEqual({
      ok: false,
      errorType: 'ManifestConnectError',
      detail: 'ECONNREFUSED',
    });
  });

  it('counts the TLS handshake in the connect timeout: a server that never answers it is "connect timeout"', async () => {
    // reads (and drops) the ClientHello, answers nothing
    const silent = createTcpServer((socket: Socket) =>
      socket.on('error', () => undefined).resume(),
    );
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const quickConnect = new ManifestFetcher(new HttpService(axios.create()), config(200, 2000));
    try {
      expect(await quickConnect.fetch(`https://127.0.0.1:${port}/m`)).toEqual({
        ok: false,
        errorType: 'ManifestTimeoutError',
        detail: 'connect timeout',
      });
    } finally {
      quickConnect.onModuleDestroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('keeps the connection alive between pulls', async () => {
    handler = answer(MANIFEST);
    const before = connections;
    const results: FetchedManifest[] = [];
    for (let i = 0; i < 3; i++) results.push(await fetcher.fetch(url));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(connections - before).toBe(1);
  });

  it('closes its kept-alive connections on shutdown', async () => {
    handler = answer(MANIFEST);
    let serverSocketClosed!: Promise<void>;
    server.once('connection', (socket) => {
      serverSocketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    });
    fetcher.onModuleDestroy(); // the agents made in beforeEach hold no socket yet
    fetcher = new ManifestFetcher(new HttpService(axios.create()), config());
    expect(await fetcher.fetch(url)).toMatchObject({ ok: true });
    fetcher.onModuleDestroy();
    // well before the 4 s an idle kept-alive socket would last on its own
    const idle = new Promise((resolve) => setTimeout(() => resolve('still open'), 1000));
    expect(await Promise.race([serverSocketClosed.then(() => 'closed'), idle])).toBe('closed');
  });

  it('reads no proxy from the environment (the pull goes where the config says)', async () => {
    handler = answer(MANIFEST);
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = 'http://127.0.0.1:9'; // nothing listens on the discard port
    try {
      expect(await fetcher.fetch(url)).toMatchObject({ ok: true });
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });
});
