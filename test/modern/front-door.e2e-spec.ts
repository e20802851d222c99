import { Client as V2Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { connectV1 } from '../support/sdk-clients';
import { postRaw, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
const envelope = (caps: object = {}): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': caps,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});
const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': V,
  'mcp-method': method,
  ...extra,
});
const body = (method: string, params: Record<string, unknown>, id: number | string = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/**
 * The 2026-07-28 front door (docs/operations.md §11; mcp.http.modernEra, on by default): the
 * dual-era classifier, the envelope and header checks with the spec's status/code pairs,
 * server/discover, resultType and cache hints; 2025 clients on the same endpoint are unaffected.
 */
describe('MCP 2026-07-28 at the front door', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('ins', [tool({ name: 'ins.quote' }), tool({ name: 'ins.claim' })]),
    );
    service.tools.set('ins.quote', () => ({ body: { premium: 42 } }));
    const mcp = gatewayConfig([bundle('ins', service, 'ins.')], {
      registry: { refreshIntervalSeconds: 60 },
    });
    gateway = await GatewayProcess.start({
      mcp: { ...mcp, cache: { maxTtlMillis: 45_000 } },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('the v2 Client in auto mode negotiates 2026-07-28 through server/discover, lists and calls', async () => {
    const client = new V2Client(
      { name: 'e2e-auto', version: '1' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl)));
    try {
      expect(client.getNegotiatedProtocolVersion?.() ?? V).toBe(V);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['ins.claim', 'ins.quote']);
      const result = await client.callTool({ name: 'ins.quote', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('42');
    } finally {
      await client.close();
    }
  });

  it('the v2 Client pinned to 2026-07-28 connects (no fallback needed)', async () => {
    const client = new V2Client(
      { name: 'e2e-pin', version: '1' },
      { versionNegotiation: { mode: { pin: V } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl)));
    try {
      expect((await client.listTools()).tools).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('a 2025 client on the same endpoint is served as before', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        'ins.claim',
        'ins.quote',
      ]);
    } finally {
      await client.close();
    }
  });

  it('server/discover: supported versions, capabilities, cache hints, the gateway serverInfo', async () => {
    const answer = await postRaw(
      gateway.mcpUrl,
      body('server/discover', { _meta: envelope() }),
      modernHeaders('server/discover'),
    );
    expect(answer.status).toBe(200);
    const result = answer.json.result;
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [V],
      capabilities: { tools: { listChanged: true } },
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-gateway-test' } },
    });
    // a bundle contributes the time left until its next pull, capped by cache.maxTtlMillis
    expect(result.ttlMs).toBeGreaterThan(0);
    expect(result.ttlMs).toBeLessThanOrEqual(45_000);
    expect(result).not.toHaveProperty('protocolVersion');
  });

  it('tools/list carries resultType and cache hints; tools/call carries resultType', async () => {
    const list = await postRaw(
      gateway.mcpUrl,
      body('tools/list', { _meta: envelope() }),
      modernHeaders('tools/list'),
    );
    expect(list.status).toBe(200);
    expect(list.json.result.resultType).toBe('complete');
    expect(list.json.result.cacheScope).toBe('public');
    expect(list.json.result.ttlMs).toBeLessThanOrEqual(45_000);
    const call = await postRaw(
      gateway.mcpUrl,
      body('tools/call', { name: 'ins.quote', arguments: {}, _meta: envelope() }),
      modernHeaders('tools/call', { 'mcp-name': 'ins.quote' }),
    );
    expect(call.status).toBe(200);
    expect(call.json.result.resultType).toBe('complete');
    expect(call.json.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe(
      'mcp-gateway-test',
    );
    // the tool's result as the 2025 era serializes it, then the two 2026 members, in this order
    const { resultType, _meta, ...toolResult } = call.json.result;
    expect(call.text).toBe(
      JSON.stringify({
        jsonrpc: '2.0',
        id: call.json.id,
        result: { ...toolResult, resultType, _meta },
      }),
    );
  });

  describe('status/code pairs of wire notes §1.2', () => {
    it.each<[string, string, Record<string, string>, number, number]>([
      [
        'missing clientCapabilities → 400 -32602',
        body('tools/list', {
          _meta: { 'io.modelcontextprotocol/protocolVersion': V },
        }),
        modernHeaders('tools/list'),
        400,
        -32602,
      ],
      [
        '2026 header but no _meta → 400 -32602',
        body('tools/list', {}),
        modernHeaders('tools/list'),
        400,
        -32602,
      ],
      [
        'no MCP-Protocol-Version header → 400 -32020',
        body('tools/list', { _meta: envelope() }),
        { 'content-type': 'application/json', 'mcp-method': 'tools/list' },
        400,
        -32020,
      ],
      [
        'header 2025-11-25 with a 2026 envelope → 400 -32020',
        body('tools/list', { _meta: envelope() }),
        modernHeaders('tools/list', { 'mcp-protocol-version': '2025-11-25' }),
        400,
        -32020,
      ],
      [
        'Mcp-Method different from the body → 400 -32020',
        body('tools/call', { name: 'ins.quote', _meta: envelope() }),
        modernHeaders('tools/list', { 'mcp-name': 'ins.quote' }),
        400,
        -32020,
      ],
      [
        'Mcp-Method in another case (values are case-sensitive) → 400 -32020',
        body('tools/list', { _meta: envelope() }),
        modernHeaders('Tools/List'),
        400,
        -32020,
      ],
      [
        'no Mcp-Name on tools/call → 400 -32020',
        body('tools/call', { name: 'ins.quote', _meta: envelope() }),
        modernHeaders('tools/call'),
        400,
        -32020,
      ],
      [
        'Mcp-Name different from params.name → 400 -32020',
        body('tools/call', { name: 'ins.quote', _meta: envelope() }),
        modernHeaders('tools/call', { 'mcp-name': 'ins.claim' }),
        400,
        -32020,
      ],
      [
        'a non-canonical base64 sentinel → 400 -32020',
        body('tools/call', { name: 'ins.quote', _meta: envelope() }),
        modernHeaders('tools/call', { 'mcp-name': '=?base64?aW5zLnF1b3Q?=' }),
        400,
        -32020,
      ],
      [
        'an unsupported modern version → 400 -32022',
        body('tools/list', {
          _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
        }),
        modernHeaders('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
        400,
        -32022,
      ],
      [
        'an envelope claiming 2025-11-25 → 400 -32022',
        body('tools/list', {
          _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
        }),
        modernHeaders('tools/list', { 'mcp-protocol-version': '2025-11-25' }),
        400,
        -32022,
      ],
      [
        'ping (removed in 2026) → 404 -32601',
        body('ping', { _meta: envelope() }),
        modernHeaders('ping'),
        404,
        -32601,
      ],
      [
        'initialize with a modern envelope → 404 -32601',
        body('initialize', { _meta: envelope() }),
        modernHeaders('initialize'),
        404,
        -32601,
      ],
      [
        'an unknown method → 404 -32601',
        body('nope/nothing', { _meta: envelope() }),
        modernHeaders('nope/nothing'),
        404,
        -32601,
      ],
      [
        'unparseable JSON with a 2026 header → 400 -32700',
        '{"jsonrpc":',
        modernHeaders('tools/list'),
        400,
        -32700,
      ],
      [
        'a batch with a modern element → 400 -32600',
        `[${body('tools/list', { _meta: envelope() })}]`,
        modernHeaders('tools/list'),
        400,
        -32600,
      ],
    ])('%s', async (_name, raw, headers, status, code) => {
      const answer = await postRaw(gateway.mcpUrl, raw, headers);
      expect(answer.status).toBe(status);
      expect(answer.json.error.code).toBe(code);
    });

    it('an unsupported version names the supported ones', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        body('tools/list', {
          _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
        }),
        modernHeaders('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
      );
      expect(answer.json.error.data).toEqual({ supported: [V], requested: '2099-01-01' });
    });

    it('an unknown tool is -32602 in-band (200), a header mismatch names both sides', async () => {
      const unknown = await postRaw(
        gateway.mcpUrl,
        body('tools/call', { name: 'ins.nope', _meta: envelope() }),
        modernHeaders('tools/call', { 'mcp-name': 'ins.nope' }),
      );
      expect(unknown.status).toBe(200);
      expect(unknown.json.error.code).toBe(-32602);
      const mismatch = await postRaw(
        gateway.mcpUrl,
        body('tools/call', { name: 'ins.quote', _meta: envelope() }),
        modernHeaders('tools/call', { 'mcp-name': 'ins.claim' }),
      );
      expect(mismatch.json.error.data).toEqual({
        mismatch: { header: 'Mcp-Name', body: 'ins.quote' },
      });
    });

    it('a base64 sentinel Mcp-Name is decoded before comparing', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        body('tools/call', { name: 'ins.quote', arguments: {}, _meta: envelope() }),
        modernHeaders('tools/call', {
          'mcp-name': `=?base64?${Buffer.from('ins.quote').toString('base64')}?=`,
        }),
      );
      expect(answer.status).toBe(200);
      expect(answer.json.result.resultType).toBe('complete');
    });

    it('a notification with a modern header is accepted (202)', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 'listen:0', _meta: envelope() },
        }),
        modernHeaders('notifications/cancelled'),
      );
      expect(answer.status).toBe(202);
    });
  });

  it('with modernEra: false (legacy-only) a 2026 probe gets a legacy answer, so 2026 clients fall back (G-12)', async () => {
    const legacyOnly = await GatewayProcess.start({
      mcp: { ...gatewayConfig([bundle('ins', service, 'ins.')]), http: { modernEra: false } },
      waitReady: true,
    });
    try {
      const answer = await rpc(legacyOnly.mcpUrl, 'server/discover', { _meta: envelope() });
      expect(answer.status).toBe(200);
      expect(answer.json.error.code).toBe(-32601);
    } finally {
      await legacyOnly.stop();
    }
  });
});
