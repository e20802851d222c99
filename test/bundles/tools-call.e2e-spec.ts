import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, postRaw, STANDARD_HEADERS } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/** Execution path (contract §10; cases B17, B18, B22). */
describe('tools/call execution against a Tool Service', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const names = [
    'svc.echo',
    'svc.slow_report',
    'svc.quick',
    'svc.defaulted',
    'svc.t_json',
    'svc.t_array',
    'svc.t_string',
    'svc.t_text',
    'svc.t_204',
    'svc.t_trunc',
    'svc.t_502',
    'svc.t_401',
    'svc.t_302',
    'svc.t_untyped',
    'svc.ns/sub',
  ];

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest(
        'svc',
        names.map((name) =>
          tool({
            name,
            meta:
              name === 'svc.slow_report'
                ? { timeoutMillis: 45_000 } // over the 1500 ms cap below
                : name === 'svc.quick'
                  ? { timeoutMillis: 300 }
                  : {},
          }),
        ),
      ),
    );
    const after = (delayMs: number) => () => ({ delayMs, body: { rows: 3 } });
    service.tools.set('svc.slow_report', after(2500));
    service.tools.set('svc.quick', after(1000));
    service.tools.set('svc.defaulted', after(2500));
    service.tools.set('svc.t_json', () => ({
      headers: { 'content-type': 'application/json' },
      body: '{"b":1,  "a":[1, 2], "nested":{"z":null}, "big": 12345678901234567890}',
    }));
    service.tools.set('svc.t_array', () => ({
      headers: { 'content-type': 'application/json' },
      body: '[ 1, "x" ]',
    }));
    service.tools.set('svc.t_string', () => ({
      headers: { 'content-type': 'application/json' },
      body: '"done"',
    }));
    service.tools.set('svc.t_text', () => ({
      headers: { 'content-type': 'text/plain' },
      body: 'OK done',
    }));
    service.tools.set('svc.t_204', () => ({ status: 204 }));
    // JSON written with no Content-Type (a framework that leaves the header out)
    service.tools.set('svc.t_untyped', () => ({
      body: '{ "b" : 1,  "big" : 12345678901234567890 }',
    }));
    service.tools.set('svc.t_trunc', () => ({
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    }));
    service.tools.set('svc.t_502', () => ({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
    }));
    service.tools.set('svc.t_401', () => ({
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: '{"error":"invalid api key"}',
    }));
    service.tools.set('svc.t_302', () => ({
      status: 302,
      headers: { location: 'https://login.example/sso' },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig(
        [bundle('svc', service, 'svc.', { authorization: { mode: 'passthrough' } })],
        { discovery: { maxToolTimeoutMillis: 1500 } },
      ),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  const textOf = (response: any): string => response.result.content[0].text;

  it('posts to {baseEndpoint}/{toolName} with the arguments object unchanged, byte for byte', async () => {
    const raw =
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"svc.echo","arguments":' +
      '{ "policyId": 12345678901234567890, "ratio": 1.0, "q": "caf\\u00e9", "nested": {"list": [1, 2]} }}}';
    const answer = await postRaw(gateway.mcpUrl, raw);
    expect(answer.status).toBe(200);
    const sent = service.toolRequests('svc.echo').at(-1)!;
    expect(sent.path).toBe('/mcp/svc.echo');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body.toString('utf8')).toBe(
      '{ "policyId": 12345678901234567890, "ratio": 1.0, "q": "caf\\u00e9", "nested": {"list": [1, 2]} }',
    );
  });

  it('sends compact arguments byte for byte too, whichever way each part is written', async () => {
    // each written compactly (as the SDKs write), one way JSON.stringify would write it and
    // ways it would not: integer-like keys out of order, a big integer, an escape, -0
    const cases = [
      '{"q":"plain","n":[1,2,{"x":null}],"t":true}',
      '{"b":1,"10":2,"2":3}',
      '{"big":12345678901234567890,"f":1.50}',
      String.raw`{"q":"caf\u00e9"}`,
      '{"z":-0}',
    ];
    for (const [i, args] of cases.entries()) {
      const raw = `{"jsonrpc":"2.0","id":${100 + i},"method":"tools/call","params":{"name":"svc.echo","arguments":${args}}}`;
      expect((await postRaw(gateway.mcpUrl, raw)).status).toBe(200);
      expect(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8')).toBe(args);
    }
    // the same arguments' value written elsewhere in the body does not stand for them
    const decoy =
      '{"jsonrpc":"2.0","id":120,"method":"tools/call","params":{"name":"svc.echo","arguments":{"f":1.0}},"x":{"f":1}}';
    expect((await postRaw(gateway.mcpUrl, decoy)).status).toBe(200);
    expect(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8')).toBe('{"f":1.0}');
  });

  it('sends {} when the call has no arguments (B18)', async () => {
    await callTool(gateway.mcpUrl, 'svc.echo');
    expect(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8')).toBe('{}');
  });

  it('keeps multibyte text, ZWJ emoji, U+2028 and escaped surrogate pairs intact (B22)', async () => {
    const raw =
      '{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"svc.echo","arguments":' +
      '{"q":"naïve café 👩‍👩‍👧 北京 \u2028 \\ud83c\\udf0d"}}}';
    const answer = await postRaw(gateway.mcpUrl, raw);
    const received = JSON.parse(service.toolRequests('svc.echo').at(-1)!.body.toString('utf8'));
    expect(received.q).toBe('naïve café 👩‍👩‍👧 北京 \u2028 🌍');
    const echoed = JSON.parse(answer.json.result.content[0].text);
    expect(echoed.received.q).toBe('naïve café 👩‍👩‍👧 北京 \u2028 🌍');
    expect(answer.text).not.toContain('\ufffd');
    expect(answer.headers.get('content-type')).toContain('charset=utf-8');
  });

  it('forwards the five caller headers unchanged, omits absent ones, and never forwards others', async () => {
    await callTool(
      gateway.mcpUrl,
      'svc.echo',
      {},
      {
        guid: 'G-1 x',
        'x-request-id': 'req-42',
        'employee-no': 'enc:QUJD==',
        cookie: 'session=secret',
        'x-forwarded-for': '10.0.0.1',
        authorization: 'Bearer agent-token',
      },
    );
    const headers = service.toolRequests('svc.echo').at(-1)!.headers;
    expect(headers.guid).toBe('G-1 x');
    expect(headers['x-request-id']).toBe('req-42');
    expect(headers['employee-no']).toBe('enc:QUJD==');
    expect(headers['virtual-employee-no']).toBeUndefined();
    expect(headers['mcp-session-id']).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers['x-forwarded-for']).toBeUndefined();
    expect(headers.authorization).toBe('Bearer agent-token'); // this bundle is configured with passthrough
  });

  it('forwards the caller mcp-session-id unchanged', async () => {
    const init = await postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 't', version: '0' },
        },
      }),
    );
    const sessionId = init.headers.get('mcp-session-id')!;
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    await callTool(
      gateway.mcpUrl,
      'svc.echo',
      {},
      { 'mcp-session-id': sessionId, 'virtual-employee-no': 'v-9' },
    );
    const headers = service.toolRequests('svc.echo').at(-1)!.headers;
    expect(headers['mcp-session-id']).toBe(sessionId);
    expect(headers['virtual-employee-no']).toBe('v-9');
  });

  it('compacts JSON answers keeping key order and number spelling (B18 t_json, t_array, t_string)', async () => {
    expect(textOf(await callTool(gateway.mcpUrl, 'svc.t_json'))).toBe(
      '{"b":1,"a":[1,2],"nested":{"z":null},"big":12345678901234567890}',
    );
    expect(textOf(await callTool(gateway.mcpUrl, 'svc.t_array'))).toBe('[1,"x"]');
    expect(textOf(await callTool(gateway.mcpUrl, 'svc.t_string'))).toBe('"done"');
    // contract §10: "응답이 JSON object/array면" compact JSON, with no Content-Type named too
    expect(textOf(await callTool(gateway.mcpUrl, 'svc.t_untyped'))).toBe(
      '{"b":1,"big":12345678901234567890}',
    );
  });

  it('passes a non-JSON 2xx body through as text and a 204 as empty text (B18 t_text, t_204)', async () => {
    const text = await callTool(gateway.mcpUrl, 'svc.t_text');
    expect(text.result.isError).toBeUndefined();
    expect(textOf(text)).toBe('OK done');
    const empty = await callTool(gateway.mcpUrl, 'svc.t_204');
    expect(empty.result.isError).toBeUndefined();
    expect(textOf(empty)).toBe('');
  });

  it('turns invalid JSON, 5xx HTML, 401 and 302 into isError results, never JSON-RPC errors (B18)', async () => {
    for (const [name, mustContain] of [
      ['svc.t_trunc', 'not valid JSON'],
      ['svc.t_502', '502'],
      ['svc.t_401', '{"error":"invalid api key"}'],
      ['svc.t_302', 'redirect'],
    ] as const) {
      const response = await callTool(gateway.mcpUrl, name);
      expect(response.error).toBeUndefined();
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toContain(mustContain);
      expect(textOf(response)).not.toContain('<html');
      expect(textOf(response)).not.toContain('127.0.0.1');
      expect(response.result.content[0]._meta.searchTime).toEqual(expect.any(Number));
    }
    expect(textOf(await callTool(gateway.mcpUrl, 'svc.t_401'))).toContain('401');
    // the redirect was not followed
    expect(service.requests.filter((r) => r.path.includes('sso'))).toHaveLength(0);
  });

  it('times a tool out at its own timeoutMillis, once, without retrying (B17 quick)', async () => {
    const before = service.toolRequests('svc.quick').length;
    const started = Date.now();
    const response = await callTool(gateway.mcpUrl, 'svc.quick');
    const elapsed = Date.now() - started;
    expect(response.result.isError).toBe(true);
    expect(textOf(response)).toContain('300 ms');
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1000);
    expect(service.toolRequests('svc.quick').length - before).toBe(1);
  });

  it('caps a declared timeout at maxToolTimeoutMillis and uses the cap when none is declared (B17)', async () => {
    for (const name of ['svc.slow_report', 'svc.defaulted']) {
      const started = Date.now();
      const response = await callTool(gateway.mcpUrl, name);
      const elapsed = Date.now() - started;
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toContain('1500 ms');
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(2400);
    }
  });

  it('keeps a "/" in a tool name as a path separator below baseEndpoint', async () => {
    await callTool(gateway.mcpUrl, 'svc.ns/sub', { a: 1 });
    expect(service.toolRequests('svc.ns/sub')).toHaveLength(1);
  });

  it('reports a Tool Service that refuses connections as an isError result without its address', async () => {
    const down = await TestToolService.start(manifest('down', [tool({ name: 'down.ping' })]));
    const gw = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('down', down, 'down.')]),
      waitReady: true,
    });
    try {
      await down.stop();
      const response = await callTool(gw.mcpUrl, 'down.ping');
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toContain('could not be reached');
      expect(textOf(response)).not.toMatch(/127\.0\.0\.1|localhost|:\d{4,5}/);
    } finally {
      await gw.stop();
    }
  });

  it('uses a static Authorization from the environment, whatever the caller sends', async () => {
    const svc = await TestToolService.start(manifest('st', [tool({ name: 'st.echo' })]));
    const gw = await GatewayProcess.start({
      mcp: gatewayConfig([
        bundle('st', svc, 'st.', { authorization: { mode: 'static', valueEnv: 'ST_TOKEN' } }),
      ]),
      env: { ST_TOKEN: 'Bearer service-token' },
      waitReady: true,
    });
    try {
      await callTool(gw.mcpUrl, 'st.echo', {}, { authorization: 'Bearer agent' });
      expect(svc.toolRequests('st.echo')[0]!.headers.authorization).toBe('Bearer service-token');
    } finally {
      await gw.stop();
      await svc.stop();
    }
  });

  it('refuses an answer over execution.maxResponseBytes as an isError result, and keeps serving', async () => {
    const svc = await TestToolService.start(manifest('big', [tool({ name: 'big.dump' })]));
    svc.tools.set('big.dump', () => ({ streamBytes: 4 * 1024 * 1024 }));
    const gw = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('big', svc, 'big.')], { execution: { maxResponseBytes: 65536 } }),
      waitReady: true,
    });
    try {
      const response = await callTool(gw.mcpUrl, 'big.dump');
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toContain('65536 bytes');
      expect((await callTool(gw.mcpUrl, 'big.dump')).result.isError).toBe(true);
      expect(gw.exitCode).toBeNull();
    } finally {
      await gw.stop();
      await svc.stop();
    }
  });

  it('never sends Authorization with the default mode none', async () => {
    const svc = await TestToolService.start(manifest('na', [tool({ name: 'na.echo' })]));
    const gw = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('na', svc, 'na.')]),
      waitReady: true,
    });
    try {
      await postRaw(
        gw.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'na.echo', arguments: {} },
        }),
        { ...STANDARD_HEADERS, authorization: 'Bearer agent' },
      );
      expect(svc.toolRequests('na.echo')[0]!.headers.authorization).toBeUndefined();
    } finally {
      await gw.stop();
      await svc.stop();
    }
  });
});
