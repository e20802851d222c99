// The bench's upstream MCP server for the upstreamCall scenario: the v1 SDK
// (@modelcontextprotocol/sdk McpServer + StreamableHTTPServerTransport) the way its README
// wires a stateful server on node:http: one McpServer and one transport per session (created
// by initialize, found by Mcp-Session-Id afterwards). Answers are SSE (the SDK's default:
// `enableJsonResponse` false), unless UPSTREAM_JSON=1.
//
//   POST /mcp    initialize / notifications / tools/call (tool `echo`: answers its arguments
//                as JSON text, e.g. {"nonce":7}, plus a text item of UPSTREAM_ANSWER_BYTES
//                bytes when set); GET and DELETE /mcp as the SDK serves them
//   GET  /__bench/sessions   {"sessions": <open sessions>}
//
// `PORT=0 node bench/lib/mcp-upstream.mjs` prints `listening <port>`; binds 127.0.0.1 only.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

const json = process.env.UPSTREAM_JSON === '1';
/** UPSTREAM_ANSWER_BYTES=N: echo adds a second text item of N bytes (to price larger results). */
const padding = 'x'.repeat(Math.max(0, Number(process.env.UPSTREAM_ANSWER_BYTES) || 0));
const transports = new Map(); // Mcp-Session-Id -> transport

function newServer() {
  const server = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echoes its arguments back as JSON text.',
      inputSchema: { nonce: z.number().int() },
    },
    async (args) => ({
      content: [
        { type: 'text', text: JSON.stringify(args) },
        ...(padding === '' ? [] : [{ type: 'text', text: padding }]),
      ],
    }),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: { a: z.number(), b: z.number() },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const http = createServer(async (req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/__bench/sessions') {
    reply(res, 200, { sessions: transports.size, json });
    return;
  }
  if (!url.startsWith('/mcp')) {
    reply(res, 404, { error: 'not found' });
    return;
  }
  try {
    const sessionId = req.headers['mcp-session-id'];
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
        const status = sessionId !== undefined ? 404 : 400;
        reply(res, status, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'No valid session' },
        });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (err) {
    if (!res.headersSent)
      reply(res, 500, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: String(err) },
      });
    else res.end();
  }
});
http.keepAliveTimeout = 65_000;
http.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${http.address().port} ${json ? 'json' : 'sse'}\n`);
});
process.on('SIGTERM', () => {
  http.close(() => process.exit(0));
  http.closeAllConnections();
});
