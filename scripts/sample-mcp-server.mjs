#!/usr/bin/env node
// The small upstream MCP server of the local demo (`npm start`; docs/operations.md §10): built with
// the official v1 SDK (stateful 2025-11-25 sessions, SSE answers), on 127.0.0.1:$PORT/mcp
// (8082 when unset). The gateway's local profile federates it as upstream `demo`, so its
// tools appear beside the sample bundle's as `demo__…` (a dot in a name becomes `_`).
// It publishes two tools, a resource, a resource template and a prompt. Ctrl-C stops it.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? '8082');

const RATES = { EUR: 1, USD: 1.08, KRW: 1480, JPY: 162 };

function buildServer() {
  const server = new McpServer({ name: 'sample-mcp-server', version: '1.0.0' });
  server.registerTool(
    'currency.convert',
    {
      title: 'Convert currency',
      description: 'Converts an amount between EUR, USD, KRW and JPY at fixed demo rates.',
      inputSchema: {
        amount: z.number().describe('The amount to convert'),
        from: z.enum(['EUR', 'USD', 'KRW', 'JPY']),
        to: z.enum(['EUR', 'USD', 'KRW', 'JPY']),
      },
      outputSchema: { amount: z.number(), currency: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ amount, from, to }) => {
      const converted = Math.round((amount / RATES[from]) * RATES[to] * 100) / 100;
      const structured = { amount: converted, currency: to };
      return {
        content: [{ type: 'text', text: JSON.stringify(structured) }],
        structuredContent: structured,
      };
    },
  );
  server.registerTool(
    'slow_count',
    {
      description: 'Counts to n, one step every 200 ms, reporting progress on the way.',
      inputSchema: { n: z.number().int().min(1).max(20) },
    },
    async ({ n }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        await new Promise((r) => setTimeout(r, 200));
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: n },
          });
      }
      return { content: [{ type: 'text', text: `counted to ${n}` }] };
    },
  );
  server.registerResource(
    'rates',
    'demo://rates',
    { title: 'Demo exchange rates', mimeType: 'application/json' },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(RATES) }],
    }),
  );
  server.registerResource(
    'rate',
    new ResourceTemplate('demo://rates/{currency}', { list: undefined }),
    { title: 'One exchange rate', mimeType: 'text/plain' },
    async (uri, { currency }) => ({
      contents: [
        { uri: uri.href, mimeType: 'text/plain', text: String(RATES[currency] ?? 'unknown') },
      ],
    }),
  );
  server.registerPrompt(
    'claim_summary',
    {
      title: 'Summarize a claim',
      description: 'Asks the model to summarize an insurance claim.',
      argsSchema: { claimId: z.string() },
    },
    ({ claimId }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Summarize insurance claim ${claimId} in three sentences.`,
          },
        },
      ],
    }),
  );
  return server;
}

const transports = new Map();

const httpServer = createServer(async (req, res) => {
  if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const sessionId = req.headers['mcp-session-id'];
  let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
  if (transport === undefined) {
    if (typeof sessionId === 'string') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32001, message: 'Session not found' },
          id: null,
        }),
      );
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    await buildServer().connect(transport);
  }
  await transport.handleRequest(req, res);
});

httpServer.listen(port, host, () => {
  console.log(`sample MCP server listening on http://${host}:${httpServer.address().port}/mcp`);
});
const stop = () => {
  for (const t of transports.values()) void t.close();
  httpServer.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, stop);
// started by scripts/start-local.mjs with an IPC channel: its end (the starter died) stops this too
if (process.channel !== undefined) process.on('disconnect', stop);
