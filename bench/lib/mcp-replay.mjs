// A 2026-07-28 MCP upstream that costs next to no CPU: at start it asks a real v2 SDK server
// (v2-fanout-server.mjs, server REPLAY_SERVER with REPLAY_TOOLS tools) each list method and
// server/discover once, the 2026 way, and keeps the JSON-RPC result (or error) it answered;
// then it serves those recorded bytes to every request of the method, under the request's own
// id, as application/json (the SDK's own answer to these requests). Anything else: -32601 on
// 404, as the SDK answers an unknown method; a notification: 202.
//
// What it is for: the modern.liveFanout scenario prices the gateway's fan-out, and ten SDK
// servers computing every answer afresh (about 1.2 ms of CPU each) would measure the CPU of
// a small machine instead (docs/benchmarks.md). `node bench/lib/mcp-replay.mjs` prints
// `listening {"servers":[<port>],"silent":[]}` (the line mcp-fanout.mjs prints); binds
// 127.0.0.1 only.
import { createServer } from 'node:http';
import { handlerFor } from './v2-fanout-server.mjs';

const count = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v >= 0 ? v : fallback;
};
const N = count('REPLAY_SERVER', 0);
const TOOLS = count('REPLAY_TOOLS', 5);
const VERSION = '2026-07-28';
const METHODS = [
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
];

/** The SDK server's answer to `method` (a 2026 request): its JSON-RPC member after the id. */
async function record(handler, method) {
  const response = await handler.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method,
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': VERSION,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'bench-replay', version: '1' },
          },
        },
      }),
    }),
  );
  const text = await response.text();
  const data = /^data: (.*)$/m.exec(text);
  const message = JSON.parse(data ? data[1] : text);
  const member =
    'result' in message
      ? `"result":${JSON.stringify(message.result)}`
      : `"error":${JSON.stringify(message.error)}`;
  return { status: response.status, member };
}

const handler = handlerFor(N, TOOLS);
const recorded = new Map();
for (const method of METHODS) recorded.set(method, await record(handler, method));
if (!recorded.get('tools/list').member.includes('"tools"'))
  throw new Error(`the SDK server listed no tools: ${recorded.get('tools/list').member}`);

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    if (message?.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const answer = recorded.get(message.method) ?? {
      status: 404,
      member: '"error":{"code":-32601,"message":"Method not found"}',
    };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},${answer.member}}`);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `listening ${JSON.stringify({ servers: [server.address().port], silent: [] })}\n`,
  );
});
process.on('SIGTERM', () => {
  server.closeAllConnections?.();
  process.exit(0);
});
