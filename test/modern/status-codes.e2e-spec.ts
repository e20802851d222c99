import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { rawHttp, type RawHttpAnswer } from '../support/raw-http';
import { ScriptedUpstream } from '../support/scripted-upstream';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const envelope = (caps: object = {}): Record<string, unknown> => ({
  [PV]: V,
  [CAPS]: caps,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});
/** The headers a 2026 client sends for `method` (plus Mcp-Name and any extra). */
const headersFor = (
  method: string,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': V,
  'mcp-method': method,
  ...extra,
});
const body = (method: string, params: Record<string, unknown>, id: number | string = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });
const b64 = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
const without = (headers: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));

/** `ins.sql`: a bundle tool whose `region` (string) and `limit` (integer) are mirrored in headers. */
const SQL_TOOL = tool({
  name: 'ins.sql',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      limit: { type: 'integer', 'x-mcp-header': 'Limit' },
      query: { type: 'string' },
    },
    required: ['query'],
  },
});
const sqlCall = (args: Record<string, unknown>, caps: object = {}): string =>
  body('tools/call', { name: 'ins.sql', arguments: args, _meta: envelope(caps) });
const sqlHeaders = (extra: Record<string, string> = {}): Record<string, string> =>
  headersFor('tools/call', { 'mcp-name': 'ins.sql', ...extra });

interface Row {
  /** The condition, in the words of wire notes §1.2. */
  readonly condition: string;
  readonly httpMethod?: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly status: number;
  /** The JSON-RPC error code; undefined: no error (a result, or no body). */
  readonly code?: number;
}

/**
 * Raw requests for every row of the 2026-07-28 status/code table (wire notes §1.2, "spec-mandated
 * status and code pairs" and what the v2 SDK answered), against a gateway with its defaults
 * (the 2026 front door is on), a bundle with an `x-mcp-header` tool and a 2026 upstream whose
 * tool asks for input (docs/operations.md §11 "Checks").
 */
describe('2026-07-28 status and code pairs, request by request (wire notes §1.2)', () => {
  let service: TestToolService;
  let asker: ScriptedUpstream;
  let gateway: GatewayProcess;

  const send = (row: Pick<Row, 'httpMethod' | 'headers' | 'body'>): Promise<RawHttpAnswer> =>
    rawHttp(gateway.mcpPort, row.httpMethod ?? 'POST', '/mcp', row.headers, row.body);

  beforeAll(async () => {
    service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' }), SQL_TOOL]));
    asker = await ScriptedUpstream.start({
      era: '2026',
      tools: [
        { name: 'ask', inputSchema: { type: 'object' } },
        {
          name: 'sql',
          inputSchema: {
            type: 'object',
            properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
          },
        },
      ],
    });
    asker.onTool('ask', () => ({
      result: {
        resultType: 'input_required',
        inputRequests: {
          confirm: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'Sure?',
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
            },
          },
        },
        requestState: 'opaque',
      },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ins', service, 'ins.')], {
        upstreams: [upstream('asker', asker.url)],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await asker?.stop();
    await service?.stop();
  });

  const rows: Row[] = [
    // required _meta key missing → 400 -32602
    {
      condition: 'the envelope lacks clientCapabilities',
      headers: headersFor('tools/list'),
      body: body('tools/list', { _meta: { [PV]: V } }),
      status: 400,
      code: -32602,
    },
    {
      condition: 'the envelope lacks protocolVersion (the header names 2026-07-28)',
      headers: headersFor('tools/list'),
      body: body('tools/list', { _meta: { [CAPS]: {} } }),
      status: 400,
      code: -32602,
    },
    {
      condition: 'a 2026 header but no _meta at all',
      headers: headersFor('tools/list'),
      body: body('tools/list', {}),
      status: 400,
      code: -32602,
    },
    // a capability the request needs but did not declare → 400 -32021
    {
      condition: 'an input request for elicitation the request did not declare',
      headers: headersFor('tools/call', { 'mcp-name': 'asker__ask' }),
      body: body('tools/call', { name: 'asker__ask', arguments: {}, _meta: envelope() }),
      status: 400,
      code: -32021,
    },
    // unsupported version → 400 -32022
    {
      condition: 'an unknown modern version (header and envelope 2099-01-01)',
      headers: headersFor('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
      body: body('tools/list', { _meta: { ...envelope(), [PV]: '2099-01-01' } }),
      status: 400,
      code: -32022,
    },
    {
      condition: 'an envelope claiming the legacy 2025-11-25',
      headers: headersFor('tools/list', { 'mcp-protocol-version': '2025-11-25' }),
      body: body('tools/list', { _meta: { ...envelope(), [PV]: '2025-11-25' } }),
      status: 400,
      code: -32022,
    },
    // required header missing, different from the body, or malformed → 400 -32020
    {
      condition: 'MCP-Protocol-Version absent',
      headers: without(headersFor('tools/list'), 'mcp-protocol-version'),
      body: body('tools/list', { _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'MCP-Protocol-Version 2025-11-25 with a 2026 envelope',
      headers: headersFor('tools/list', { 'mcp-protocol-version': '2025-11-25' }),
      body: body('tools/list', { _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Method absent',
      headers: without(headersFor('tools/list'), 'mcp-method'),
      body: body('tools/list', { _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Method tools/list on a tools/call body',
      headers: headersFor('tools/list', { 'mcp-name': 'ins.quote' }),
      body: body('tools/call', { name: 'ins.quote', _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Method in another case (values are case-sensitive)',
      headers: headersFor('Tools/List'),
      body: body('tools/list', { _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Name absent on tools/call',
      headers: headersFor('tools/call'),
      body: body('tools/call', { name: 'ins.quote', _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Name different from params.name',
      headers: headersFor('tools/call', { 'mcp-name': 'ins.sql' }),
      body: body('tools/call', { name: 'ins.quote', _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Name absent on resources/read',
      headers: headersFor('resources/read'),
      body: body('resources/read', { uri: 'file:///x', _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Name a non-canonical base64 sentinel',
      headers: headersFor('tools/call', { 'mcp-name': '=?base64?aW5zLnF1b3Q?=' }),
      body: body('tools/call', { name: 'ins.quote', _meta: envelope() }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Param-Region absent for a region argument',
      headers: sqlHeaders({ 'mcp-param-limit': '5' }),
      body: sqlCall({ region: 'us-west1', limit: 5, query: 'q' }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Param-Region different from the region argument',
      headers: sqlHeaders({ 'mcp-param-region': 'eu-west1' }),
      body: sqlCall({ region: 'us-west1', query: 'q' }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Param-Limit not the limit argument',
      headers: sqlHeaders({ 'mcp-param-limit': '6' }),
      body: sqlCall({ limit: 5, query: 'q' }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Param-Region a non-canonical base64 sentinel',
      headers: sqlHeaders({ 'mcp-param-region': '=?base64?ZWNobw?=' }),
      body: sqlCall({ region: 'echo', query: 'q' }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'Mcp-Param-Region sent for an argument the body does not carry',
      headers: sqlHeaders({ 'mcp-param-region': 'us-west1' }),
      body: sqlCall({ query: 'q' }),
      status: 400,
      code: -32020,
    },
    {
      condition: 'initialize with a 2026 header but no envelope',
      headers: headersFor('initialize'),
      body: body('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      }),
      status: 400,
      code: -32020,
    },
    // method not implemented → 404 -32601
    ...['nope/nothing', 'ping', 'initialize', 'logging/setLevel', 'resources/subscribe'].map(
      (method): Row => ({
        condition: `${method} with a 2026 envelope (not a 2026 method)`,
        headers: headersFor(method),
        body: body(method, { _meta: envelope() }),
        status: 404,
        code: -32601,
      }),
    ),
    // notification accepted → 202
    {
      condition: 'a notification with a 2026 envelope',
      headers: without(headersFor('notifications/cancelled'), 'mcp-method'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'listen:0', _meta: envelope() },
      }),
      status: 202,
    },
    // GET / DELETE without a 2025 session → 405 (a -32000 body, like the v2 SDK)
    {
      condition: 'GET with a 2026 MCP-Protocol-Version',
      httpMethod: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': V },
      status: 405,
      code: -32000,
    },
    {
      condition: 'DELETE with a 2026 MCP-Protocol-Version',
      httpMethod: 'DELETE',
      headers: { 'mcp-protocol-version': V },
      status: 405,
      code: -32000,
    },
    {
      condition: 'GET without any session',
      httpMethod: 'GET',
      headers: { accept: 'text/event-stream' },
      status: 405,
      code: -32000,
    },
    // the rest of what the v2 SDK answered
    {
      condition: 'an unknown tool (in-band, 200)',
      headers: headersFor('tools/call', { 'mcp-name': 'ins.nope' }),
      body: body('tools/call', { name: 'ins.nope', arguments: {}, _meta: envelope() }),
      status: 200,
      code: -32602,
    },
    {
      condition: 'unparseable JSON with a 2026 header',
      headers: headersFor('tools/list'),
      body: '{"jsonrpc":',
      status: 400,
      code: -32700,
    },
    {
      condition: 'a batch with a 2026 element',
      headers: headersFor('tools/list'),
      body: `[${body('tools/list', { _meta: envelope() })}]`,
      status: 400,
      code: -32600,
    },
    {
      condition: 'a Content-Type other than application/json (an intermediary rejecting)',
      headers: headersFor('tools/list', { 'content-type': 'text/plain' }),
      body: body('tools/list', { _meta: envelope() }),
      status: 415,
      code: -32000,
    },
    {
      condition: 'no envelope and an unknown legacy header version (the 2025 transport rule)',
      headers: headersFor('tools/list', { 'mcp-protocol-version': '1999-01-01' }),
      body: body('tools/list', {}),
      status: 400,
      code: -32000,
    },
  ];

  it.each(rows)('$condition → $status', async (row) => {
    const answer = await send(row);
    expect(answer.status).toBe(row.status);
    if (row.code === undefined) {
      if (answer.text !== '') expect(answer.json?.error?.code).not.toBeDefined();
    } else {
      expect(answer.json.error.code).toBe(row.code);
    }
  });

  it('405 names POST as the allowed method', async () => {
    for (const httpMethod of ['GET', 'DELETE']) {
      const answer = await send({ httpMethod, headers: { 'mcp-protocol-version': V } });
      expect(answer.status).toBe(405);
      expect(String(answer.headers.allow)).toContain('POST');
    }
  });

  it('-32022 names the supported versions and the requested one', async () => {
    const answer = await send(rows.find((r) => r.code === -32022) as Row);
    expect(answer.json.error.data).toEqual({ supported: [V], requested: '2099-01-01' });
  });

  it('-32021 names the required capabilities; declared, the same call is served', async () => {
    const refused = await send(rows.find((r) => r.code === -32021) as Row);
    expect(refused.json.error.data).toEqual({
      requiredCapabilities: { elicitation: { form: {} } },
    });
    const declared = await send({
      headers: headersFor('tools/call', { 'mcp-name': 'asker__ask' }),
      body: body('tools/call', {
        name: 'asker__ask',
        arguments: {},
        _meta: envelope({ elicitation: {} }),
      }),
    });
    expect(declared.status).toBe(200);
    expect(declared.json.result.resultType).toBe('input_required');
    expect(declared.json.result.inputRequests.confirm.method).toBe('elicitation/create');
  });

  it('-32020 names the header and the body value it disagrees with', async () => {
    const answer = await send({
      headers: sqlHeaders({ 'mcp-param-region': 'eu-west1' }),
      body: sqlCall({ region: 'us-west1', query: 'q' }),
    });
    expect(answer.json.error.data).toEqual({
      mismatch: { header: 'Mcp-Param-Region', body: 'us-west1' },
    });
  });

  it('Mcp-Param-* equal to the arguments (base64 sentinel decoded, integers numerically) is served', async () => {
    const answer = await send({
      headers: sqlHeaders({ 'mcp-param-region': b64('Zürich '), 'mcp-param-limit': '5.0' }),
      body: sqlCall({ region: 'Zürich ', limit: 5, query: 'q' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result.resultType).toBe('complete');
    const unmirrored = await send({ headers: sqlHeaders(), body: sqlCall({ query: 'q' }) });
    expect(unmirrored.status).toBe(200);
  });

  it.each(['server/discover', 'tools/list', 'tools/call'])(
    'a %s result carries resultType',
    async (method) => {
      const params =
        method === 'tools/call'
          ? { name: 'ins.quote', arguments: {}, _meta: envelope() }
          : { _meta: envelope() };
      const answer = await send({
        headers: headersFor(method, method === 'tools/call' ? { 'mcp-name': 'ins.quote' } : {}),
        body: body(method, params),
      });
      expect(answer.status).toBe(200);
      expect(answer.json.result.resultType).toBe('complete');
    },
  );

  it('a call to a 2026 upstream tool carries its Mcp-Param-* headers on to the upstream, encoded', async () => {
    const answer = await send({
      headers: headersFor('tools/call', {
        'mcp-name': 'asker__sql',
        'mcp-param-region': b64('Zürich '),
      }),
      body: body('tools/call', {
        name: 'asker__sql',
        arguments: { region: 'Zürich ' },
        _meta: envelope(),
      }),
    });
    expect(answer.status).toBe(200);
    const sent = asker.calls('sql').at(-1);
    expect(sent?.headers['mcp-param-region']).toBe(b64('Zürich '));
    expect(sent?.headers['mcp-name']).toBe('sql');
  });
});
