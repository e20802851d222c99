import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';

const MODERN = '2026-07-28';
const CALL_MILLIS = 30_000;
/** A tool that takes a while, well within callMillis. */
const SLOW_MILLIS = 3_000;

/**
 * A 2026-07-28 upstream (server/discover answered, stateless) that never answers `initialize`.
 * docs/operations.md §10 "Eras": a 2025 client's request to an `auto` upstream that answers in
 * 2026 asks once for a 2025 session of its own; the handshake is waited on at most 5 s (within the
 * request's own time), and one that did not open is not asked again for 30 s, its 2025 clients'
 * requests bridged meanwhile — so a server that hangs its 2025 initialize cannot hold every 2025
 * client's call for its callMillis, call after call, and a call's deadline is its callMillis in
 * all, the wait for the session included.
 */
describe('a 2026 upstream that hangs the 2025 initialize the gateway sends for 2025 clients', () => {
  let server: Server;
  const sockets = new Set<Socket>();
  let url = '';
  let initializes = 0;
  let gateway: GatewayProcess;

  const answer = (res: ServerResponse, id: unknown, result: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
  };

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
        let msg: any;
        try {
          msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return void res.writeHead(400).end();
        }
        if (msg.id === undefined) return void res.writeHead(202).end();
        switch (msg.method) {
          case 'initialize':
            initializes++;
            return; // never answered
          case 'server/discover':
            return answer(res, msg.id, {
              resultType: 'complete',
              supportedVersions: [MODERN],
              capabilities: { tools: {} },
              _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'hang-init', version: '1' } },
            });
          case 'tools/list':
            return answer(res, msg.id, {
              resultType: 'complete',
              tools: [
                { name: 'quick', inputSchema: { type: 'object' } },
                { name: 'slow', inputSchema: { type: 'object' } },
              ],
            });
          case 'tools/call':
            if (msg.params?.name === 'slow') {
              setTimeout(
                () =>
                  answer(res, msg.id, {
                    resultType: 'complete',
                    content: [{ type: 'text', text: 'slow answer' }],
                  }),
                SLOW_MILLIS,
              );
              return;
            }
            return answer(res, msg.id, {
              resultType: 'complete',
              content: [{ type: 'text', text: 'quick answer' }],
            });
          default:
            res.writeHead(404, { 'content-type': 'application/json' });
            return void res.end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: msg.id,
                error: { code: -32601, message: 'no' },
              }),
            );
        }
      });
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('dual', url, { timeouts: { callMillis: CALL_MILLIS } })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("a 2025 client's calls are answered without waiting out callMillis, the session not asked again at once, each within its own deadline", async () => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    const session = {
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-11-25',
    };
    const call = async (name: string) => {
      const started = performance.now();
      const called = await rpc(gateway.mcpUrl, 'tools/call', { name, arguments: {} }, session);
      return {
        text: called.json?.result?.content?.[0]?.text as string,
        millis: performance.now() - started,
      };
    };
    const first = await call('dual__quick');
    expect(first.text).toBe('quick answer');
    expect(initializes).toBe(1);
    // the handshake's 5 s, far from the 30 s callMillis (a third of it: a loaded machine's margin)
    expect(first.millis).toBeLessThan(CALL_MILLIS / 3);
    // bridged at once for a while: no second initialize
    const second = await call('dual__quick');
    expect([second.text, initializes]).toEqual(['quick answer', 1]);
    const slow = await call('dual__slow');
    expect([slow.text, initializes]).toEqual(['slow answer', 1]);
    expect(slow.millis).toBeLessThan(CALL_MILLIS / 3);
  }, 90_000);
});
