import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/** POSTs tools/list with node:http (no automatic decoding) and returns the raw answer. */
function listRaw(
  url: string,
  headers: Record<string, string>,
  id: number | string = 1,
): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }));
  });
}

const many = (n: number) =>
  manifest(
    'big',
    Array.from({ length: n }, (_, i) =>
      tool({ name: `big.t${i}`, description: `Tool ${i}: looks up one kind of record, é.` }),
    ),
  );

/**
 * docs/operations.md §2 "Compressed lists": big tools/list answers are served gzip-encoded to
 * clients that accept it.
 */
describe('tools/list with Accept-Encoding: gzip', () => {
  const track = stopAfterEach();

  async function start(n: number): Promise<GatewayProcess> {
    const service = track(await TestToolService.start(many(n)));
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('big', service, 'big.')], {
          discovery: { maxToolsPerBundle: 2000, maxToolsTotal: 2000 },
        }),
        waitReady: true,
      }),
    );
  }

  it('answers a large list gzip-encoded, decoding to exactly the identity answer, for every id', async () => {
    const gateway = await start(1500);
    for (const id of [1, 'req-ü', 42]) {
      const plain = await listRaw(gateway.mcpUrl, {}, id);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('accept-encoding');
      const zipped = await listRaw(gateway.mcpUrl, { 'accept-encoding': 'gzip, deflate, br' }, id);
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
      expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
      expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    }
    const parsed = JSON.parse(
      gunzipSync((await listRaw(gateway.mcpUrl, { 'accept-encoding': 'gzip' })).body).toString(),
    );
    expect(parsed.result.tools).toHaveLength(1500);
  });

  it('frames the gzip answer as SSE for an SSE-only client', async () => {
    const gateway = await start(1500);
    const zipped = await listRaw(gateway.mcpUrl, {
      accept: 'text/event-stream',
      'accept-encoding': 'gzip',
    });
    expect(zipped.headers['content-type']).toContain('text/event-stream');
    expect(gunzipSync(zipped.body).toString()).toMatch(/^event: message\ndata: \{"jsonrpc":"2\.0"/);
  });

  it('does not encode for gzip;q=0, and leaves small lists alone', async () => {
    const gateway = await start(1500);
    expect(
      (await listRaw(gateway.mcpUrl, { 'accept-encoding': 'gzip;q=0, br' })).headers[
        'content-encoding'
      ],
    ).toBeUndefined();
    const small = await start(3);
    const answer = await listRaw(small.mcpUrl, { 'accept-encoding': 'gzip' });
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(answer.body.toString()).result.tools).toHaveLength(3);
  });

  it('serves the official SDK client (which sends Accept-Encoding: gzip) the whole list', async () => {
    const gateway = await start(1500);
    const client = new Client({ name: 'gzip-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl)));
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(1500);
      expect(tools[1499]?.description).toContain('é');
    } finally {
      await client.close();
    }
  });
});
