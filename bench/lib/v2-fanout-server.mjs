// The bench's small v2 SDK MCP server (@modelcontextprotocol/server createMcpHandler:
// stateless, the 2026-07-28 revision with the SDK's stateless fallback for 2025 clients) and
// the adapter that mounts a web-standard handler on node:http. Shared by mcp-fanout.mjs (the
// servers themselves) and mcp-replay.mjs (which records their answers once).
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** The factory of server `n` with `tools` tools: a fresh McpServer per request (createMcpHandler's model). */
export function factoryFor(n, tools) {
  return () => {
    const server = new McpServer({ name: `fanout-${n}`, version: '1.0.0' });
    for (let t = 0; t < tools; t++) {
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

/** Server `n`'s web-standard handler (`handler.fetch(Request) → Response`). */
export function handlerFor(n, tools) {
  return createMcpHandler(factoryFor(n, tools));
}

/** node:http → web Request → handler.fetch → node:http, streaming the answer (SSE included). */
export function mount(handler) {
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
