/**
 * Era bridging of structured output (wire notes §2.4, G-26): a 2026-07-28 tool may declare a
 * non-object `outputSchema` and answer a non-object `structuredContent` (SCH26); 2025-11-25 requires
 * both to be objects (SCH25 `Tool.outputSchema` root `type: "object"`, `CallToolResult.structuredContent`
 * an object). The official dual-era server (v2 SDK, `legacy: 'stateless'`) serves a 2025 client
 * of the same tool a wrapped schema `{type:"object",properties:{result:…},required:["result"]}` and
 * `structuredContent: {result: …}` (v2srv `wrapOutputSchemaForLegacy`, `appendTextFallbackForNonObject`).
 * What the upstream passes directly to a 2025 client, the gateway must pass.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { connectV1 } from '../../support/sdk-clients';
import { rpc, openLegacySession } from '../../support/rpc';

function buildServer(): V2McpServer {
  const server = new V2McpServer({ name: 'nums-v2', version: '2.0.0' });
  server.registerTool(
    'primes',
    {
      description: 'The first primes, as an array',
      inputSchema: z.object({}),
      outputSchema: z.array(z.number()),
    },
    () => ({
      content: [{ type: 'text', text: '[2,3,5]' }],
      structuredContent: [2, 3, 5],
    }),
  );
  return server;
}

async function startDualEra(): Promise<{ url: string; stop: () => Promise<void> }> {
  const handler = createMcpHandler(() => buildServer(), { legacy: 'stateless' });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string') headers.set(k, v);
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url ?? '/'}`, {
          method: req.method,
          headers,
          body: req.method === 'POST' ? new Uint8Array(raw) : undefined,
        }),
      );
      const out: Record<string, string> = {};
      response.headers.forEach((v, k) => (out[k] = v));
      res.writeHead(response.status, out);
      if (response.body !== null)
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
          res.write(chunk);
      res.end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('era bridging: non-object structured output of a 2026 upstream to a 2025 client', () => {
  let up: { url: string; stop: () => Promise<void> };
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await startDualEra();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('nums', up.url, { protocol: process.env.ATK_PROTOCOL ?? '2026-07-28' }),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('directly, the dual-era upstream serves a v1 (2025) client a wrapped object schema and result', async () => {
    const client = await connectV1(up.url);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'primes')?.outputSchema?.type).toBe('object');
    const result = await client.callTool({ name: 'primes', arguments: {} });
    expect(result.structuredContent).toEqual({ result: [2, 3, 5] });
    await client.close();
  });

  it('through the gateway, the 2025 client gets an object outputSchema in tools/list (SCH25: root type "object")', async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const list = await rpc(gateway.mcpUrl, 'tools/list', {}, session);
    const tool = list.json.result.tools.find((t: { name: string }) => t.name === 'nums__primes');
    expect(tool).toBeDefined();
    expect(tool.outputSchema.type).toBe('object');
  });

  it('through the gateway, the 2025 client gets an object structuredContent (SCH25)', async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const call = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'nums__primes', arguments: {} },
      session,
    );
    expect(call.json.result.isError).not.toBe(true);
    const sc = call.json.result.structuredContent;
    expect(typeof sc === 'object' && sc !== null && !Array.isArray(sc)).toBe(true);
  });

  it('the official v1 client can list the tools through the gateway at all', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('nums__primes');
    } finally {
      await client.close();
    }
  });
});
