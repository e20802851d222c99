/**
 * `notifications/elicitation/complete` (MCP 2025-11-25, URL-mode elicitation: "Servers SHOULD send
 * a notifications/elicitation/complete notification when an out-of-band interaction started by
 * URL mode elicitation is completed"; wire notes §2.9: S→C, `{elicitationId}`, 2025-11-25 yes).
 * A 2025 upstream that asks a URL-mode elicitation inside a tool call and, once the user is done,
 * sends the completion on the call's own stream (relatedRequestId). Directly, the 2025 client gets
 * it. The gateway relays the elicitation (with its elicitationId) to the 2025 client but drops the
 * completion notice (docs/operations.md §10 "Relaying": only progress and message are relayed).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';
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
        mcp.registerTool(
          'connect',
          { description: 'URL elicitation, then its completion' },
          async (extra) => {
            const answer = await mcp.server.elicitInput(
              {
                mode: 'url',
                elicitationId: 'e-42',
                url: 'https://auth.example.com/x',
                message: 'Connect your account',
              },
              { relatedRequestId: extra.requestId },
            );
            await mcp.server.createElicitationCompletionNotifier('e-42', {
              relatedRequestId: extra.requestId,
            })();
            return { content: [{ type: 'text', text: `connect: ${answer.action}` }] };
          },
        );
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

describe('2025 URL elicitation: the completion notice reaches the client', () => {
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

  for (const [label, url] of [
    ['directly', () => up.url],
    ['through the gateway', () => gateway.mcpUrl],
  ] as const) {
    it(`${label}: the 2025 client gets notifications/elicitation/complete for the elicitationId it was asked`, async () => {
      const client = await connectV1(url(), {}, { elicitation: { url: {} } });
      const asked: string[] = [];
      const completed: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(String((request.params as { elicitationId?: string }).elicitationId));
        return { action: 'accept' };
      });
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
        completed.push(n.params.elicitationId);
      });
      try {
        const name = label === 'directly' ? 'connect' : 'old__connect';
        const result = await client.callTool({ name, arguments: {} });
        expect((result.content as { text: string }[])[0]?.text).toBe('connect: accept');
        await new Promise((r) => setTimeout(r, 200));
        expect(completed).toEqual(asked);
        expect(completed).toHaveLength(1);
      } finally {
        await client.close();
      }
    });
  }
});
