/**
 * What a 2025 upstream sends after a request it relayed to the client on a call's own stream
 * (docs/operations.md §10 "Relaying"), directly and through the gateway, to a v1 client:
 * - `notifications/elicitation/complete` of a URL-mode elicitation (MCP 2025-11-25: "Servers
 *   SHOULD send a notifications/elicitation/complete notification when an out-of-band
 *   interaction started by URL mode elicitation is completed"; wire notes §2.9) reaches the
 *   client for the elicitationId it was asked;
 * - `notifications/cancelled` of that request (MCP 2025-11-25 cancellation; the v1 SDK sends it
 *   when its own request times out) reaches the client under the id the gateway gave the
 *   request, so the client's handler is aborted (the user's dialog closes).
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

const FORM = { type: 'object' as const, properties: { ok: { type: 'boolean' as const } } };

/** The v1 server's tools: `connect` (URL elicitation, then its completion), `hurry`. */
function buildServer(): V1McpServer {
  const mcp = new V1McpServer({ name: 'follow-ups-v1', version: '1' });
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
  mcp.registerTool('hurry', { description: 'asks, gives up after 400 ms' }, async (extra) => {
    // a first question (request id 0: the v1 client ignores a cancellation of id 0)
    await mcp.server.elicitInput(
      { mode: 'form', message: 'Warm-up?', requestedSchema: FORM },
      { relatedRequestId: extra.requestId },
    );
    const answer = await mcp.server
      .elicitInput(
        { mode: 'form', message: 'Quick?', requestedSchema: FORM },
        { relatedRequestId: extra.requestId, timeout: 400 },
      )
      .then((a) => a.action)
      .catch(() => 'gave up');
    return { content: [{ type: 'text', text: `hurry: ${answer}` }] };
  });
  return mcp;
}

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
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, t),
        });
        await buildServer().connect(t);
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

describe("2025: an upstream's follow-ups of the request it relayed to the client", () => {
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

  for (const [label, url, prefix] of [
    ['directly', () => up.url, ''],
    ['through the gateway', () => gateway.mcpUrl, 'old__'],
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
        const result = await client.callTool({ name: `${prefix}connect`, arguments: {} });
        expect((result.content as { text: string }[])[0]?.text).toBe('connect: accept');
        await new Promise((r) => setTimeout(r, 200));
        expect(completed).toEqual(asked);
        expect(completed).toHaveLength(1);
      } finally {
        await client.close();
      }
    });

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
        const result = await client.callTool({ name: `${prefix}hurry`, arguments: {} });
        expect((result.content as { text: string }[])[0]?.text).toBe('hurry: gave up');
        await new Promise((r) => setTimeout(r, 300));
        expect(aborted).toBe(true);
      } finally {
        await client.close();
      }
    });
  }
});
