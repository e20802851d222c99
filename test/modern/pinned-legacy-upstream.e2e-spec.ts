import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V2Upstream } from '../support/mcp-upstreams';
import { CLIENT_KINDS, connectClient } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
const ENVELOPE_KEYS = [
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientCapabilities',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/logLevel',
];

/**
 * An upstream pinned to `protocol: 2025-11-25` in front of a dual-era server (the v2 SDK serving
 * both eras on one URL, as the official conformance reference server does): every request the
 * gateway sends it is a 2025 session request, whichever era the agent speaks. A 2026 agent's
 * `_meta` envelope stays at the gateway (docs/operations.md §11 "Multi round-trip and era
 * bridging"); its other `_meta` keys go on. Before, the envelope went on unchanged, the server
 * answered as a 2026 one and the call ended in "answered as a server of another era".
 */
describe('a 2026 agent calling through an upstream pinned to 2025-11-25', () => {
  let service: TestToolService;
  let dual: V2Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
    dual = await V2Upstream.start({ legacy: 'stateless' });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
        upstreams: [upstream('dual', dual.url, { protocol: '2025-11-25' })],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await dual?.stop();
    await service?.stop();
  });

  it.each(CLIENT_KINDS)('the %s client gets the tool’s result', async (kind) => {
    const client = await connectClient(kind, gateway.mcpUrl);
    try {
      const result = await client.callTool({ name: 'dual__add', arguments: { a: 2, b: 3 } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ sum: 5 });
    } finally {
      await client.close();
    }
  });

  it('the upstream gets a 2025 request: no envelope key, the other _meta keys kept', async () => {
    const before = dual.requestsFor('tools/call').length;
    const res = await fetch(gateway.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': 'dual__shout',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'dual__shout',
          arguments: { text: 'pinned' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/logLevel': 'info',
            traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          },
        },
      }),
    });
    const json = (await res.json()) as {
      result?: { content?: { text?: string }[]; isError?: boolean; resultType?: string };
    };
    expect(res.status).toBe(200);
    expect(json.result?.isError).toBeFalsy();
    expect(json.result?.content?.[0]?.text).toBe('PINNED');
    expect(json.result?.resultType).toBe('complete');

    const sent = dual.requestsFor('tools/call').slice(before);
    expect(sent).toHaveLength(1);
    const request = sent[0];
    expect(request?.headers['mcp-protocol-version']).toBe('2025-11-25');
    const meta = (request?.body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
    for (const key of ENVELOPE_KEYS) expect(meta ?? {}).not.toHaveProperty([key]);
    expect(meta).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
  });
});
