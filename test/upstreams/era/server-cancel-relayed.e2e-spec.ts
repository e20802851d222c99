/**
 * A server that gives up on its own request to the client sends `notifications/cancelled` with that
 * request's id (MCP 2025-11-25 cancellation: "either side can send a cancellation notification to
 * indicate that a previously-issued request should be terminated"; the v1 SDK does on a request
 * timeout, on the related stream). Directly, the 2025 client's handler for the elicitation is
 * aborted (the user's dialog closes). Through the gateway the elicitation is relayed under a sealed
 * id, and the upstream's cancellation of it is dropped (docs/operations.md §10 "Relaying": "any other
 * notification (… a cancellation: not the call's)") — yet it names a request the gateway relayed to
 * this very client on this call's stream: the client keeps asking its user about a question nobody
 * waits for.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { connectV1 } from '../../support/sdk-clients';

async function startV1(): Promise<{ url: string; stop: () => Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      const sid = req.headers['mcp-session-id'];
      if (typeof sid === 'string') {
        const t = sessions.get(sid);
        if (!t) return void res.writeHead(404).end();
        return void (await t.handleRequest(req, res, body));
      }
      if (req.method === 'POST' && isInitializeRequest(body)) {
        const mcp = new V1McpServer({ name: 'url-v1', version: '1' });
        mcp.registerTool('hurry', { description: 'asks, gives up after 400 ms' }, async (extra) => {
          // a first question (request id 0: the v1 client ignores a cancellation of id 0)
          await mcp.server.elicitInput(
            {
              mode: 'form',
              message: 'Warm-up?',
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
            },
            { relatedRequestId: extra.requestId },
          );
          const answer = await mcp.server
            .elicitInput(
              {
                mode: 'form',
                message: 'Quick?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
              },
              { relatedRequestId: extra.requestId, timeout: 400 },
            )
            .then((a) => a.action)
            .catch(() => 'gave up');
          return { content: [{ type: 'text', text: `hurry: ${answer}` }] };
        });
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, t),
        });
        await mcp.connect(t);
        return void (await t.handleRequest(req, res, body));
      }
      res.writeHead(400).end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("2025: an upstream's cancellation of the request it relayed to the client", () => {
  let up: { url: string; stop: () => Promise<void> };
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await startV1();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('old', up.url, { protocol: '2025-11-25' })] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  for (const [label, url, name] of [
    ['directly', () => up.url, 'hurry'],
    ['through the gateway', () => gateway.mcpUrl, 'old__hurry'],
  ] as const) {
    it(`${label}: the client's elicitation handler is aborted when the server gives up on it`, async () => {
      const client = await connectV1(url(), {}, { elicitation: {} });
      let aborted = false;
      let asked = 0;
      client.setRequestHandler(ElicitRequestSchema, (_request, extra) =>
        asked++ === 0
          ? { action: 'accept', content: { ok: true } }
          : new Promise((resolve) => {
              const done = setTimeout(() => resolve({ action: 'decline' }), 2500);
              extra.signal.addEventListener('abort', () => {
                aborted = true;
                clearTimeout(done);
                resolve({ action: 'cancel' });
              });
            }),
      );
      try {
        const result = await client.callTool({ name, arguments: {} });
        expect((result.content as { text: string }[])[0]?.text).toBe('hurry: gave up');
        await new Promise((r) => setTimeout(r, 300));
        expect(aborted).toBe(true);
      } finally {
        await client.close();
      }
    });
  }
});
