// The upstreams of the fanout scenario, all in one process: FANOUT_SERVERS (49) small MCP
// servers built with the v2 SDK (@modelcontextprotocol/server createMcpHandler: stateless,
// the 2026-07-28 revision with the SDK's stateless fallback for 2025 clients), each on its own
// port with FANOUT_TOOLS (5) tools, plus FANOUT_SILENT (1) straggler(s): a TCP listener that
// accepts every connection, reads what it is sent and never answers.
//
// Before it says it listens, the process warms its servers up with the v2 SDK client (two
// tools/list rounds each). `node bench/lib/mcp-fanout.mjs` prints one line:
//   listening {"servers":[<port>, …],"silent":[<port>, …]}
// Only 127.0.0.1 is ever bound. The web-standard handler is mounted on node:http by the small
// adapter below (the SDK's own adapter package, @modelcontextprotocol/node, is not a dependency).
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';

const count = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v >= 0 ? v : fallback;
};
const SERVERS = count('FANOUT_SERVERS', 49);
const TOOLS = count('FANOUT_TOOLS', 5);
const SILENT = count('FANOUT_SILENT', 1);

/** The factory of server `n`: a fresh McpServer per request (createMcpHandler's model). */
function factoryFor(n) {
  return () => {
    const server = new McpServer({ name: `fanout-${n}`, version: '1.0.0' });
    for (let t = 0; t < TOOLS; t++) {
      server.registerTool(
        `lookup_${t}`,
        {
          description: `Looks up record set ${t} of fan-out server ${n} and returns the matching rows.`,
          inputSchema: z.object({ query: z.string().max(200), limit: z.number().int().optional() }),
        },
        async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
      );
    }
    return server;
  };
}

/** node:http → web Request → handler.fetch → node:http, streaming the answer (SSE included). */
function mount(handler) {
  return async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.set(name, value);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      });
      const response = await handler.fetch(request);
      const out = {};
      response.headers.forEach((value, name) => (out[name] = value));
      res.writeHead(response.status, out);
      if (response.body === null) {
        res.end();
        return;
      }
      res.on('close', () => void response.body?.cancel().catch(() => {}));
      for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    }
  };
}

const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });

const servers = [];
const ports = [];
for (let n = 0; n < SERVERS; n++) {
  const server = createServer(mount(createMcpHandler(factoryFor(n))));
  server.keepAliveTimeout = 65_000;
  servers.push(server);
  ports.push(await listen(server));
}
const held = new Set();
const silent = [];
for (let n = 0; n < SILENT; n++) {
  const server = createTcpServer((socket) => {
    // Accepted, read, never answered; closed only when the peer gives up.
    held.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => held.delete(socket));
  });
  servers.push(server);
  silent.push(await listen(server));
}
// Warm the servers up (JIT, schema compilation) before anyone measures through them: the
// v2 SDK client lists every server's tools twice, the way a 2026-era client asks.
for (let pass = 0; pass < 2; pass++) {
  for (const port of ports) {
    const client = new Client({ name: 'fanout-warm-up', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    const { tools } = await client.listTools();
    if (tools.length !== TOOLS) throw new Error(`server on ${port} lists ${tools.length} tools`);
    await client.close();
  }
}
process.stdout.write(`listening ${JSON.stringify({ servers: ports, silent })}\n`);

process.on('SIGTERM', () => {
  for (const socket of held) socket.destroy();
  for (const server of servers) server.closeAllConnections?.();
  process.exit(0);
});
