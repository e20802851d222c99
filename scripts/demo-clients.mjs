// Two agents of different MCP eras against the same gateway endpoint (README.md "Both MCP eras"): a
// 2025-11-25 client (the v1 SDK: initialize + session) and a 2026-07-28 client (the v2 SDK pinned
// to the stateless revision: server/discover, per-request envelope). Run while `npm start` runs:
//
//   node scripts/demo-clients.mjs            # MCP_URL=http://127.0.0.1:8080/mcp by default
//
// Both list the same tools and call the same one; the 2026 client also shows the cache hints
// the gateway put on its tools/list result.
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as Client2026,
  StreamableHTTPClientTransport as Transport2026,
} from '@modelcontextprotocol/client';

const url = new URL(process.env.MCP_URL ?? 'http://127.0.0.1:8080/mcp');
const call = { name: 'processing.policy.lookup', arguments: { policyNumber: 'P-100231' } };

const legacy = new Client2025({ name: 'agent-2025', version: '1.0.0' });
await legacy.connect(new Transport2025(url));
const modern = new Client2026(
  { name: 'agent-2026', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await modern.connect(new Transport2026(url));

for (const [label, client] of [
  ['2025-11-25 (v1 SDK, session)', legacy],
  [`${modern.getNegotiatedProtocolVersion?.() ?? '2026-07-28'} (v2 SDK, stateless)`, modern],
]) {
  const { tools } = await client.listTools();
  const result = await client.callTool(call);
  console.log(`${label}:`);
  console.log(`  tools/list  ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);
  console.log(`  tools/call  ${call.name} → ${result.content?.[0]?.text?.slice(0, 100)}`);
}

// The cache hints are top-level members of a 2026 list result (wire notes §3); the SDK client
// keeps them to itself, so ask once more by hand with the 2026 headers and envelope.
const answer = await fetch(url, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/list',
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  }),
}).then((res) => res.json());
const { resultType, ttlMs, cacheScope } = answer.result;
console.log(
  `2026 tools/list result: resultType=${resultType} ttlMs=${ttlMs} cacheScope=${cacheScope}`,
);

await legacy.close();
await modern.close();
