import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';

const MAX_RESPONSE_BYTES = 65_536;
const TINY_CALL_MILLIS = 3000;

/**
 * A hostile 2025 upstream (raw node:http: no SDK sends this) answers tools/call with an SSE
 * stream that sets an event id and `retry: 0`, then ends without the response; every GET that
 * resumes it (Last-Event-ID) brings a new id, `retry: 0` and one progress notification, then
 * ends. The resumed stream is one answer (docs/security.md, "Hostile upstreams"): its bytes
 * count against `execution.maxResponseBytes` across every GET, and `retry:` is waited at least
 * 250 ms, so one call cannot be turned into a loop of GETs or relay more than the cap.
 */
function hostileUpstream(padBytes: number): { server: Server; gets: () => number } {
  let gets = 0;
  // the progress token the call went with (the gateway's own: libs/upstream/src/progress-token.ts)
  let token: unknown;
  const pad = 'x'.repeat(padBytes);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        if (req.headers['last-event-id'] === undefined) return void res.writeHead(405).end();
        gets += 1;
        const data = JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: gets, message: pad },
        });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`id: e${gets}\nretry: 0\ndata: ${data}\n\n`);
        return;
      }
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      const msg = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      if (msg.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown, headers: Record<string, string> = {}): void => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      };
      switch (msg.method) {
        case 'initialize':
          return reply(
            {
              protocolVersion: '2025-11-25',
              capabilities: { tools: {} },
              serverInfo: { name: 'resumer', version: '1' },
            },
            { 'mcp-session-id': 's1' },
          );
        case 'tools/list':
          return reply({
            tools: [{ name: 'slow', inputSchema: { type: 'object', properties: {} } }],
          });
        case 'tools/call':
          token = msg.params?._meta?.progressToken;
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end('id: e0\nretry: 0\ndata: \n\n');
          return;
        default:
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: msg.id,
              error: { code: -32601, message: 'not found' },
            }),
          );
      }
    });
  });
  return { server, gets: () => gets };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('a resumed call stream is bounded as one answer', () => {
  const big = hostileUpstream(16 * 1024);
  const tiny = hostileUpstream(0);
  let gateway: GatewayProcess;

  beforeAll(async () => {
    const [bigUrl, tinyUrl] = await Promise.all([listen(big.server), listen(tiny.server)]);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('big', bigUrl, { protocol: '2025-11-25', timeouts: { callMillis: 10_000 } }),
          upstream('tiny', tinyUrl, {
            protocol: '2025-11-25',
            timeouts: { callMillis: TINY_CALL_MILLIS },
          }),
        ],
        execution: { maxResponseBytes: MAX_RESPONSE_BYTES },
        shutdown: { gracePeriodSeconds: 2 },
      }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    for (const s of [big.server, tiny.server]) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  async function call(name: string): Promise<SseReader> {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = init.headers.get('mcp-session-id');
    const stream = await SseReader.open(
      gateway.mcpUrl,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name, arguments: {}, _meta: { progressToken: 'p1' } },
      }),
    );
    await stream.waitForMessage((m) => m.id === 9, 20_000);
    return stream;
  }

  it('counts every GET against maxResponseBytes and ends the call as too large', async () => {
    const stream = await call('big__slow');
    const progress = stream.messages.filter((m) => m.method === 'notifications/progress');
    const relayed = progress.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
    // each GET brings ~16.5 KB: the fourth one passes the 64 KiB the whole answer may have
    expect(big.gets()).toBeGreaterThanOrEqual(2);
    expect(big.gets()).toBeLessThanOrEqual(4);
    expect(relayed).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    const answer = stream.messages.find((m) => m.id === 9);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toContain(`limit of ${MAX_RESPONSE_BYTES} bytes`);
  });

  it('waits at least 250 ms between GETs whatever retry: asks', async () => {
    const stream = await call('tiny__slow');
    const answer = stream.messages.find((m) => m.id === 9);
    expect(answer.result.isError).toBe(true);
    // resumed, but at most once per 250 ms of the call's 3 s (2,000 GETs a second before)
    expect(tiny.gets()).toBeGreaterThanOrEqual(2);
    expect(tiny.gets()).toBeLessThanOrEqual(TINY_CALL_MILLIS / 250 + 1);
  });
});
