import { request } from 'node:http';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { postRaw, rpc, STANDARD_HEADERS } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** The /mcp wire for 2025-era clients: lifecycle, status codes and JSON-RPC errors (B15, B23, B09). */
describe('/mcp JSON-RPC wire (2025 era)', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('v', [
        tool({
          name: 'v.needs_x',
          inputSchema: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
        }),
      ]),
    );
    service.tools.set('v.needs_x', (req) =>
      JSON.parse(req.body.toString('utf8')).x === undefined
        ? { status: 400, body: { error: 'x is required' } }
        : { body: { ok: true } },
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('v', service, 'v.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  const initialize = (protocolVersion: unknown) =>
    rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 't', version: '0' },
    });

  describe('initialize', () => {
    it.each(['2025-11-25', '2025-06-18', '2025-03-26'])(
      'answers a supported client version %s with that version',
      async (v) => {
        const answer = await initialize(v);
        expect(answer.status).toBe(200);
        expect(answer.json.result.protocolVersion).toBe(v);
        expect(answer.json.result.capabilities).toEqual({ tools: { listChanged: true } });
        expect(answer.json.result.serverInfo.name).toBe('mcp-gateway-test');
      },
    );

    it('answers an unsupported client version with 2025-11-25', async () => {
      expect((await initialize('2024-11-05')).json.result.protocolVersion).toBe('2025-11-25');
      expect((await initialize('2099-01-01')).json.result.protocolVersion).toBe('2025-11-25');
    });

    it('issues a visible-ASCII Mcp-Session-Id that any later request may carry', async () => {
      const answer = await initialize('2025-11-25');
      const sessionId = answer.headers.get('mcp-session-id');
      expect(sessionId).toMatch(/^[\x21-\x7e]{20,}$/);
      const list = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' },
      );
      expect(list.status).toBe(200);
      expect(list.json.result.tools).toHaveLength(1);
    });

    it('issues different session ids to different initializes (nothing shared, nothing stored)', async () => {
      const a = (await initialize('2025-11-25')).headers.get('mcp-session-id');
      const b = (await initialize('2025-11-25')).headers.get('mcp-session-id');
      expect(a).not.toBe(b);
    });

    it('rejects initialize without protocolVersion with -32602', async () => {
      const answer = await rpc(gateway.mcpUrl, 'initialize', { capabilities: {} });
      expect(answer.json.error.code).toBe(-32602);
    });
  });

  it('answers 404 -32001 "Session not found" to a session id it did not issue, so the client re-initializes', async () => {
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/list',
      {},
      { 'mcp-session-id': 'v1.t1.forged-token-value' },
    );
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe(-32001);
  });

  it('answers ping with an empty result', async () => {
    const answer = await rpc(gateway.mcpUrl, 'ping');
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  describe('notifications and client responses get 202 with an empty body (B15)', () => {
    it.each([
      ['notifications/initialized', { jsonrpc: '2.0', method: 'notifications/initialized' }],
      [
        'an unknown notification',
        { jsonrpc: '2.0', method: 'notifications/does_not_exist', params: {} },
      ],
      ['roots changed', { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }],
      ['a stray response', { jsonrpc: '2.0', id: 'srv-unknown-1', result: {} }],
    ])('%s', async (_label, body) => {
      const answer = await postRaw(gateway.mcpUrl, JSON.stringify(body));
      expect(answer.status).toBe(202);
      expect(answer.text).toBe('');
    });
  });

  describe('batches are refused with 400 -32600 and reach no Tool Service (B15)', () => {
    it.each([
      [
        'a batch',
        [
          { jsonrpc: '2.0', id: 11, method: 'tools/list' },
          {
            jsonrpc: '2.0',
            id: 12,
            method: 'tools/call',
            params: { name: 'v.needs_x', arguments: { x: 'a' } },
          },
        ],
      ],
      ['an empty batch', []],
      [
        'a batch with initialize',
        [
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 't', version: '0' },
            },
          },
        ],
      ],
    ])('%s', async (_label, body) => {
      const calls = service.toolRequests().length;
      const answer = await postRaw(gateway.mcpUrl, JSON.stringify(body));
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(answer.headers.get('mcp-session-id')).toBeNull();
      expect(service.toolRequests().length).toBe(calls);
    });
  });

  describe('error codes (B23; unknown tool is -32001 by contract §8)', () => {
    it('unknown method → -32601 and no tool runs', async () => {
      const calls = service.toolRequests().length;
      const answer = await rpc(gateway.mcpUrl, 'definitely/not/a/method', {});
      expect(answer.status).toBe(200);
      expect(answer.json.error.code).toBe(-32601);
      expect(service.toolRequests().length).toBe(calls);
    });

    it('unknown tool → -32001 "Tool not found" naming the tool, not an isError result', async () => {
      const answer = await rpc(gateway.mcpUrl, 'tools/call', {
        name: 'no_such_tool',
        arguments: {},
      });
      expect(answer.json.result).toBeUndefined();
      expect(answer.json.error.code).toBe(-32001);
      expect(answer.json.error.message).toContain('Tool not found');
      expect(answer.json.error.message).toContain('no_such_tool');
    });

    it('missing tool name → -32602', async () => {
      expect((await rpc(gateway.mcpUrl, 'tools/call', { arguments: {} })).json.error.code).toBe(
        -32602,
      );
    });

    it('arguments that are not an object → -32602', async () => {
      expect(
        (await rpc(gateway.mcpUrl, 'tools/call', { name: 'v.needs_x', arguments: [1] })).json.error
          .code,
      ).toBe(-32602);
    });

    it('params that are not an object → -32602', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}',
      );
      expect(answer.json).toMatchObject({ id: 5, error: { code: -32602 } });
    });

    it('bad arguments → an isError result naming the path, not a JSON-RPC error (checked against inputSchema before the Tool Service, docs/operations.md §6)', async () => {
      const calls = service.toolRequests('v.needs_x').length;
      const answer = await rpc(gateway.mcpUrl, 'tools/call', { name: 'v.needs_x', arguments: {} });
      expect(answer.json.error).toBeUndefined();
      expect(answer.json.result.isError).toBe(true);
      expect(answer.json.result.content[0].text).toContain('- /x: is required');
      expect(service.toolRequests('v.needs_x')).toHaveLength(calls);
    });

    it('a cursor on tools/list → -32602 (the list is one page)', async () => {
      expect((await rpc(gateway.mcpUrl, 'tools/list', { cursor: 'abc' })).json.error.code).toBe(
        -32602,
      );
    });

    it('parse error → HTTP 400, -32700, id null', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":8,"method":');
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ id: null, error: { code: -32700 } });
    });

    it('not JSON-RPC → HTTP 400, -32600', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"foo":1}');
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32600);
    });

    it('bytes that are not UTF-8 → HTTP 400, -32700 (never silently replaced)', async () => {
      const body = Buffer.concat([
        Buffer.from(
          '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"v.needs_x","arguments":{"x":"',
        ),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}}}'),
      ]);
      const calls = service.toolRequests().length;
      const res = await fetch(gateway.mcpUrl, { method: 'POST', headers: STANDARD_HEADERS, body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
      expect(service.toolRequests().length).toBe(calls);
    });

    it('a body nested deeper than 128 levels → HTTP 400, -32600, refused before parsing', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({
        code: -32600,
        message: expect.stringContaining('deeper than 128'),
      });
    });

    it('an id beyond 2^53 comes back exactly as sent', async () => {
      const answer = await postRaw(
        gateway.mcpUrl,
        '{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}',
      );
      expect(answer.text).toBe('{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}');
      const failed = await postRaw(
        gateway.mcpUrl,
        '{"jsonrpc":"2.0","id":1.5e300,"method":"nope"}',
      );
      expect(failed.text).toContain('"id":1.5e300,"error"');
    });

    it('a null id → HTTP 400, -32600', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":null,"method":"ping"}');
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32600);
    });
  });

  describe('transport', () => {
    it('an unsupported MCP-Protocol-Version header without an envelope → 400 -32000 (2025 transport rule)', async () => {
      const answer = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { 'mcp-protocol-version': '1999-01-01' },
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32000);
    });

    it('a 2026 MCP-Protocol-Version header without the per-request envelope → 400 -32602 (wire notes §1.4 step 6)', async () => {
      const answer = await rpc(
        gateway.mcpUrl,
        'tools/list',
        {},
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe(-32602);
    });

    it('server/discover with a 2026 envelope is served (the gateway is dual-era by default)', async () => {
      const answer = await rpc(
        gateway.mcpUrl,
        'server/discover',
        {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      );
      expect(answer.status).toBe(200);
      expect(answer.json.result.supportedVersions).toEqual(['2026-07-28']);
    });

    it('a Content-Type other than application/json → 415', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
        'content-type': 'text/plain',
        accept: 'application/json',
      });
      expect(answer.status).toBe(415);
    });

    it.each([
      ['application/json', 'application/json'],
      ['*/*', 'application/json'],
      ['application/json;q=0.9, text/event-stream;q=0.1', 'application/json'],
      ['text/event-stream', 'text/event-stream'],
    ])('Accept %s → 200 framed as %s (B09)', async (accept, type) => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":3,"method":"ping"}', {
        'content-type': 'application/json',
        accept,
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain(type);
      expect(answer.json).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    });

    it('no Accept header → 200 JSON (lenient, documented)', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":3,"method":"ping"}', {
        'content-type': 'application/json',
      });
      expect(answer.status).toBe(200);
    });

    it('Accept text/html → 406', async () => {
      const answer = await postRaw(gateway.mcpUrl, '{"jsonrpc":"2.0","id":3,"method":"ping"}', {
        'content-type': 'application/json',
        accept: 'text/html',
      });
      expect(answer.status).toBe(406);
    });

    it('GET /mcp without a session → 405 with Allow: POST; DELETE without one → 400 (it ends the session it names)', async () => {
      const get = await fetch(gateway.mcpUrl, {
        method: 'GET',
        headers: { accept: 'text/event-stream' },
      });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      const del = await fetch(gateway.mcpUrl, { method: 'DELETE' });
      expect(del.status).toBe(400);
      expect(await del.json()).toMatchObject({ id: null, error: { code: -32600 } });
    });

    it('a body over 4 MiB → 413 with a JSON-RPC error, refused before it is read', async () => {
      const { status, body } = await new Promise<{ status: number; body: string }>(
        (resolve, reject) => {
          const req = request(gateway.mcpUrl, {
            method: 'POST',
            headers: { ...STANDARD_HEADERS, 'content-length': 5_000_000 },
          });
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          });
          req.on('error', reject);
          req.flushHeaders();
          req.write('{"jsonrpc":"2.0"');
        },
      );
      expect(status).toBe(413);
      expect(JSON.parse(body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    });

    it('the management endpoints are not served on the /mcp port, nor /mcp on the management port', async () => {
      expect((await fetch(`http://127.0.0.1:${gateway.mcpPort}/actuator/toolBundles`)).status).toBe(
        404,
      );
      expect(
        (await fetch(`http://127.0.0.1:${gateway.mcpPort}/actuator/health/readiness`)).status,
      ).toBe(404);
      const onManagement = await fetch(`${gateway.managementUrl}/mcp`, {
        method: 'POST',
        headers: STANDARD_HEADERS,
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      expect(onManagement.status).toBe(404);
    });
  });
});
