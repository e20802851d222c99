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
// adapter of v2-fanout-server.mjs (the SDK's own adapter package, @modelcontextprotocol/node,
// is not a dependency).
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { handlerFor, mount } from './v2-fanout-server.mjs';

const count = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v >= 0 ? v : fallback;
};
const SERVERS = count('FANOUT_SERVERS', 49);
const TOOLS = count('FANOUT_TOOLS', 5);
const SILENT = count('FANOUT_SILENT', 1);

const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });

const servers = [];
const ports = [];
for (let n = 0; n < SERVERS; n++) {
  const server = createServer(mount(handlerFor(n, TOOLS)));
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
