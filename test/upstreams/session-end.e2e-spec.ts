import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import {
  deleteKeys,
  freePort,
  redisClient,
  SHARED_REDIS_URL,
  uniqueKeyPrefix,
} from '../support/redis';
import { openLegacySession, postRaw, rpc, STANDARD_HEADERS } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { SwitchableProxy } from '../support/switchable-proxy';

const FILE = 'repo://files/a.ts';

/** One bodiless request (GET, DELETE) and its whole answer. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, string>,
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const updatesOf = (stream: SseReader, uri: string): number =>
  stream.messages.filter(
    (m: { method?: string; params?: { uri?: string } }) =>
      m.method === 'notifications/resources/updated' && m.params?.uri === uri,
  ).length;

/**
 * `DELETE /mcp` ends a 2025 session (2025-11-25 transports, "Session Management";
 * docs/operations.md §9 "Ending a session"): answered 200, and from then on every request with
 * its id is 404 — a POST of any kind, a GET stream, another DELETE — on this replica at once and,
 * with Redis, on every other within about a second; its GET streams close and its resource
 * subscriptions end. Runs on both /mcp listeners (jest.config.js).
 */
describe('ending a 2025 session with DELETE /mcp', () => {
  let repo: V1Upstream;
  const keyPrefix = uniqueKeyPrefix();
  const started: GatewayProcess[] = [];
  const open: SseReader[] = [];

  beforeAll(async () => {
    repo = await V1Upstream.start({}, { subscribable: true });
  });

  afterAll(async () => {
    for (const stream of open) stream.close();
    await Promise.all(started.map((g) => g.stop()));
    await repo?.stop();
    const redis = redisClient();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  async function replica(
    redisUrl?: string,
    extra: Record<string, unknown> = {},
  ): Promise<GatewayProcess> {
    const gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
        virtualServers: [{ id: 'only-repo', sources: ['repo'] }],
        redis: { keyPrefix },
        ...extra,
      },
      env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: redisUrl },
      waitReady: true,
    });
    started.push(gateway);
    return gateway;
  }

  async function getStream(url: string, session: Record<string, string>): Promise<SseReader> {
    const stream = await SseReader.open(url, 'GET', { accept: 'text/event-stream', ...session });
    open.push(stream);
    return stream;
  }

  /** What every kind of request with the session's id is answered: status per kind. */
  async function answersTo(url: string, session: Record<string, string>) {
    const headers = { ...STANDARD_HEADERS, ...session };
    return {
      request: (await rpc(url, 'tools/list', undefined, session)).status,
      notification: (
        await postRaw(
          url,
          JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
          headers,
        )
      ).status,
      response: (
        await postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 'r-1', result: {} }), headers)
      ).status,
      get: (await send(url, 'GET', { accept: 'text/event-stream', ...session })).status,
      delete: (await send(url, 'DELETE', session)).status,
    };
  }

  describe('on one replica', () => {
    let gateway: GatewayProcess;

    beforeAll(async () => {
      gateway = await replica();
    });

    it("the v1 SDK client's terminateSession() ends it: its GET stream closes, its subscription ends, its id is 404 everywhere", async () => {
      const transport = new StreamableHTTPClientTransport(new URL(gateway.mcpUrl));
      const client = new Client({ name: 'e2e-v1', version: '1.0.0' }, { capabilities: {} });
      await client.connect(transport);
      const sessionId = transport.sessionId;
      if (sessionId === undefined) throw new Error('the gateway issued no session id');
      const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
      await client.subscribeResource({ uri: FILE });
      const stream = await getStream(gateway.mcpUrl, session);
      expect(stream.status).toBe(200);
      // the stream is registered before the upstream speaks: repeat until an update arrives
      await waitFor(
        async () => {
          await repo.notifyResourceUpdated(FILE);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return updatesOf(stream, FILE) > 0;
        },
        10_000,
        () => `no update on the stream: ${JSON.stringify(stream.messages)}`,
      );
      const unsubscribedBefore = repo.requestsFor('resources/unsubscribe').length;

      await transport.terminateSession();
      expect(transport.sessionId).toBeUndefined();

      await stream.waitForEnd();
      // the session was the URI's only subscriber here: the upstream is told to unsubscribe
      await waitFor(
        () => repo.requestsFor('resources/unsubscribe').length > unsubscribedBefore,
        10_000,
        () => 'the upstream was not told resources/unsubscribe',
      );
      expect(await answersTo(gateway.mcpUrl, session)).toEqual({
        request: 404,
        notification: 404,
        response: 404,
        get: 404,
        delete: 404,
      });
      await client.close();
    });

    it('ending one session leaves another of the same client alone', async () => {
      const ended = await openLegacySession(gateway.mcpUrl);
      const kept = await openLegacySession(gateway.mcpUrl);
      const keptStream = await getStream(gateway.mcpUrl, kept);
      expect(keptStream.status).toBe(200);
      const answer = await send(gateway.mcpUrl, 'DELETE', ended);
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('');
      expect((await rpc(gateway.mcpUrl, 'tools/list', undefined, kept)).status).toBe(200);
      expect(keptStream.ended).toBe(false);
    });

    it("on a virtual server's path too: DELETE /mcp/servers/{id} ends the session, on every path", async () => {
      const onServer = gateway.mcpUrl.replace(/\/mcp$/, '/mcp/servers/only-repo');
      const session = await openLegacySession(onServer);
      expect((await rpc(onServer, 'tools/list', undefined, session)).status).toBe(200);
      expect((await send(onServer, 'DELETE', session)).status).toBe(200);
      expect((await rpc(onServer, 'tools/list', undefined, session)).status).toBe(404);
      expect((await rpc(gateway.mcpUrl, 'tools/list', undefined, session)).status).toBe(404);
    });

    it('a DELETE without Mcp-Session-Id is 400 with a JSON-RPC error; an id that does not open is 404', async () => {
      const missing = await send(gateway.mcpUrl, 'DELETE', {});
      expect(missing.status).toBe(400);
      expect(missing.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(missing.body)).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600 },
      });
      const forged = await send(gateway.mcpUrl, 'DELETE', { 'mcp-session-id': 'v1.t1.AAAA' });
      expect(forged.status).toBe(404);
      // the 2026 era has no sessions: as before, 405
      const modern = await send(gateway.mcpUrl, 'DELETE', {
        'mcp-protocol-version': '2026-07-28',
      });
      expect(modern.status).toBe(405);
      expect(modern.headers.allow).toBe('POST');
    });
  });

  it('with Redis: ended through replica A, the id is 404 on replica B and its GET stream there closes', async () => {
    const [a, b] = [await replica(SHARED_REDIS_URL), await replica(SHARED_REDIS_URL)];
    const session = await openLegacySession(a.mcpUrl);
    // B knows the session as live (and caches that for a second) before it ends
    expect((await rpc(b.mcpUrl, 'tools/list', undefined, session)).status).toBe(200);
    const onB = await getStream(b.mcpUrl, session);
    expect(onB.status).toBe(200);

    expect((await send(a.mcpUrl, 'DELETE', session)).status).toBe(200);

    await onB.waitForEnd(10_000);
    await waitFor(
      async () => (await rpc(b.mcpUrl, 'tools/list', undefined, session)).status === 404,
      10_000,
      () => 'replica B still serves the ended session',
    );
    expect(await answersTo(b.mcpUrl, session)).toEqual({
      request: 404,
      notification: 404,
      response: 404,
      get: 404,
      delete: 404,
    });
  });

  it("with Redis, when the end's message never reaches replica B (its Redis connections were down as A sent it), B still closes the session's GET stream at its next look, within listen.recheckSeconds", async () => {
    const redisPort = Number(new URL(SHARED_REDIS_URL).port || 6379);
    const proxy = await SwitchableProxy.start(redisPort);
    try {
      const listen = { listen: { recheckSeconds: 1 } };
      const [a, b] = [await replica(SHARED_REDIS_URL, listen), await replica(proxy.url, listen)];
      const session = await openLegacySession(a.mcpUrl);
      const onB = await getStream(b.mcpUrl, session);
      expect(onB.status).toBe(200);
      // B's connections are cut and cannot come back: it is subscribed to nothing as A publishes
      proxy.switchTo(await freePort());
      expect((await send(a.mcpUrl, 'DELETE', session)).status).toBe(200);
      proxy.switchTo(redisPort);
      await onB.waitForEnd(15_000);
      // the line comes on B's stdout, perhaps after the stream's end reached the test
      await waitFor(
        () =>
          b.output.includes(
            'Released 1 session(s) ended on another replica whose end message did not arrive here',
          ),
        5_000,
        () => 'B did not say it released the session',
      );
      expect((await rpc(b.mcpUrl, 'tools/list', undefined, session)).status).toBe(404);
    } finally {
      await proxy.stop();
    }
  });

  it('without Redis: the end holds on the replica that was told only (as documented)', async () => {
    const [a, b] = [await replica(), await replica()];
    const session = await openLegacySession(a.mcpUrl);
    expect((await send(a.mcpUrl, 'DELETE', session)).status).toBe(200);
    expect((await rpc(a.mcpUrl, 'tools/list', undefined, session)).status).toBe(404);
    expect((await rpc(b.mcpUrl, 'tools/list', undefined, session)).status).toBe(200);
  });
});
