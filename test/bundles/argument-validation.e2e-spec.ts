import { ADMIN_TOKEN, admin, waitForState } from '../admin/admin-support';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { envelopeMeta, MODERN, modernRequest } from '../support/modern-rpc';
import { callTool, postRaw, STANDARD_HEADERS } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/** An order: a required sku, a quantity of at least 1, an express option with nothing else in it. */
const ORDER_SCHEMA = {
  type: 'object',
  properties: {
    sku: { type: 'string', minLength: 1 },
    quantity: { type: 'integer', minimum: 1 },
    express: {
      type: 'object',
      properties: { by: { type: 'string' } },
      additionalProperties: false,
    },
  },
  required: ['sku'],
};
const BAD_ORDER = { quantity: 0, express: { by: 'noon', extra: true } };
const ORDER_VIOLATIONS = [
  '- /sku: is required',
  '- /quantity: must be >= 1',
  '- /express/extra: is not allowed',
];

type Block = { type: string; text: string };

function textOf(result: unknown): string {
  return ((result as { content?: Block[] }).content ?? [])[0]?.text ?? '';
}

function refusal(name: string, lines: readonly string[]): string {
  return [
    `Invalid arguments for tool ${name}: they do not match its inputSchema, and the call was not sent.`,
    ...lines,
  ].join('\n');
}

/**
 * docs/operations.md §6 "Argument validation": a call's arguments are checked against the tool's
 * inputSchema before anything is sent, per source (bundles by default, upstreams when turned
 * on, registrations too); a failure is an isError result naming each violated path (MCP
 * 2025-11-25: input validation errors are tool execution errors), in both eras.
 */
describe('argument validation through a real gateway, Tool Services and SDK upstreams', () => {
  let shop: TestToolService;
  let loose: TestToolService;
  let checked: V1Upstream;
  let unchecked: V1Upstream;
  let registered: V1Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    shop = await TestToolService.start(
      manifest('shop', [tool({ name: 'shop.order', inputSchema: ORDER_SCHEMA })]),
    );
    loose = await TestToolService.start(
      manifest('loose', [tool({ name: 'loose.order', inputSchema: ORDER_SCHEMA })]),
    );
    [checked, unchecked, registered] = await Promise.all([
      V1Upstream.start(),
      V1Upstream.start(),
      V1Upstream.start(),
    ]);
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig(
          [
            bundle('shop', shop, 'shop.'),
            bundle('loose', loose, 'loose.', { validateArguments: false }),
          ],
          {
            upstreams: [
              upstream('vu', checked.url, { validateArguments: true }),
              upstream('pu', unchecked.url),
            ],
          },
        ),
        admin: { allowLoopback: true },
      },
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([
      shop?.stop(),
      loose?.stop(),
      checked?.stop(),
      unchecked?.stop(),
      registered?.stop(),
    ]);
  });

  it('a bundle tool (checked by default): a 2025 SDK client gets isError naming each path, and the Tool Service gets nothing', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const result = await client.callTool({ name: 'shop.order', arguments: BAD_ORDER });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(refusal('shop.order', ORDER_VIOLATIONS));
      // absent arguments are checked as {}
      const none = await client.callTool({ name: 'shop.order' });
      expect(none.isError).toBe(true);
      expect(textOf(none)).toBe(refusal('shop.order', ['- /sku: is required']));
    } finally {
      await client.close();
    }
    expect(shop.toolRequests('shop.order')).toHaveLength(0);
  });

  it('variant: the 2026 era, raw and through the v2 SDK client, gets the same isError result as a complete result', async () => {
    const raw = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'shop.order', arguments: BAD_ORDER },
      {},
    );
    expect(raw.status).toBe(200);
    expect(raw.json.result).toMatchObject({ isError: true, resultType: 'complete' });
    expect(textOf(raw.json.result)).toBe(refusal('shop.order', ORDER_VIOLATIONS));
    const client = await connectV2(gateway.mcpUrl);
    try {
      const result = await client.callTool({ name: 'shop.order', arguments: { sku: '' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        refusal('shop.order', ['- /sku: must NOT have fewer than 1 characters']),
      );
    } finally {
      await client.close();
    }
    expect(shop.toolRequests('shop.order')).toHaveLength(0);
  });

  it('arguments giving a member twice are refused naming it: what is checked is what is sent', async () => {
    const answer = await postRaw(
      gateway.mcpUrl,
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shop.order","arguments":{"sku":"A-1","quantity":99,"quantity":1}}}',
      STANDARD_HEADERS,
    );
    expect(answer.json.result.isError).toBe(true);
    expect(textOf(answer.json.result)).toBe(
      refusal('shop.order', ['- /quantity: is given more than once; give each member once']),
    );
    expect(shop.toolRequests('shop.order')).toHaveLength(0);
  });

  it('a number with more digits than a double holds is refused where the schema checks it, in both eras: the source gets the text', async () => {
    // JSON.parse reads 0.99999999999999999999 as 1, which passes {type: integer, minimum: 1};
    // the Tool Service gets the text, a fraction under the minimum
    const legacy = await postRaw(
      gateway.mcpUrl,
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shop.order","arguments":{"sku":"A-1","quantity":0.99999999999999999999}}}',
      STANDARD_HEADERS,
    );
    expect(legacy.json.result.isError).toBe(true);
    expect(textOf(legacy.json.result)).toBe(
      refusal('shop.order', [
        "- /quantity: 0.99999999999999999999 has more digits than a double holds and the schema's check depends on them (it reads as 1); send at most 15 significant digits",
      ]),
    );
    expect(shop.toolRequests('shop.order')).toHaveLength(0);
    // the 2026 era, to an upstream checked by the gateway: 50.00000000000000000001 reads as 50
    const before = checked.requestsFor('tools/call').length;
    const modern = await postRaw(
      gateway.mcpUrl,
      `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"vu__repo_search","arguments":{"query":"g","limit":50.00000000000000000001},"_meta":${JSON.stringify(envelopeMeta({}))}}}`,
      {
        ...STANDARD_HEADERS,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'vu__repo_search',
      },
    );
    expect(modern.json.result).toMatchObject({ isError: true, resultType: 'complete' });
    expect(textOf(modern.json.result)).toContain(
      '- /limit: 50.00000000000000000001 has more digits than a double holds',
    );
    expect(checked.requestsFor('tools/call')).toHaveLength(before);
    // a long number the schema does not check goes on as written
    const id = await postRaw(
      gateway.mcpUrl,
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shop.order","arguments":{"sku":"A-1","ref":12345678901234567890}}}',
      STANDARD_HEADERS,
    );
    expect(id.json.result.isError).toBeFalsy();
    expect(shop.toolRequests('shop.order').at(-1)?.body.toString('utf8')).toBe(
      '{"sku":"A-1","ref":12345678901234567890}',
    );
    // the next cases count what reached the Tool Service from here
    shop.requests.length = 0;
  });

  it('conforming arguments reach the Tool Service byte for byte', async () => {
    const answer = await callTool(gateway.mcpUrl, 'shop.order', { sku: 'A-1', quantity: 2 });
    expect(answer.result.isError).toBeFalsy();
    const sent = shop.toolRequests('shop.order');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body.toString('utf8')).toBe('{"sku":"A-1","quantity":2}');
  });

  it('a bundle with validateArguments: false gets the arguments as they came', async () => {
    const answer = await callTool(gateway.mcpUrl, 'loose.order', BAD_ORDER);
    expect(answer.result.isError).toBeFalsy();
    expect(loose.toolRequests('loose.order')).toHaveLength(1);
  });

  it('an upstream with validateArguments: true: refused before the upstream is asked, in both eras', async () => {
    const before = checked.requestsFor('tools/call').length;
    const v1 = await connectV1(gateway.mcpUrl);
    try {
      const result = await v1.callTool({
        name: 'vu__repo_search',
        arguments: { query: '', limit: 99 },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        refusal('vu__repo_search', [
          '- /query: must NOT have fewer than 1 characters',
          '- /limit: must be <= 50',
        ]),
      );
    } finally {
      await v1.close();
    }
    const modern = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'vu__repo_search', arguments: { limit: 'ten' } },
      {},
    );
    expect(modern.json.result).toMatchObject({ isError: true, resultType: 'complete' });
    expect(textOf(modern.json.result)).toContain('- /query: is required');
    expect(textOf(modern.json.result)).toContain('- /limit: must be integer');
    expect(checked.requestsFor('tools/call')).toHaveLength(before);
    expect(checked.seen.searches).toHaveLength(0);
    // and conforming arguments go through
    const ok = await callTool(gateway.mcpUrl, 'vu__repo_search', { query: 'gateway' });
    expect(ok.result.isError).toBeFalsy();
    expect(checked.seen.searches).toEqual([{ query: 'gateway' }]);
  });

  it('an upstream by default validates its own: the gateway sends the call on', async () => {
    await callTool(gateway.mcpUrl, 'pu__repo_search', { query: '', limit: 99 });
    expect(unchecked.requestsFor('tools/call')).toHaveLength(1);
  });

  it('a registered upstream with validateArguments: true is checked too, and its record says so', async () => {
    const posted = await admin(gateway, 'POST', '/admin/upstreams', {
      id: 'reg',
      url: registered.url,
      validateArguments: true,
    });
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({ id: 'reg', validateArguments: true });
    await waitForState(gateway, 'reg', 'ACTIVE');
    let answer: any;
    await waitFor(async () => {
      answer = await callTool(gateway.mcpUrl, 'reg__repo_search', { limit: 0 });
      return answer.result !== undefined;
    }, 10_000);
    expect(answer.result.isError).toBe(true);
    expect(textOf(answer.result)).toBe(
      refusal('reg__repo_search', ['- /query: is required', '- /limit: must be >= 1']),
    );
    expect(registered.requestsFor('tools/call')).toHaveLength(0);
    const listed = await admin(gateway, 'GET', '/admin/upstreams/pu');
    expect(listed.body).toMatchObject({ validateArguments: false });
  });

  it('counts each refusal per source in mcp_gateway_tool_arguments_refused_total', async () => {
    const scrape = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
    const count = (source: string): number =>
      Number(
        new RegExp(
          `^mcp_gateway_tool_arguments_refused_total\\{source="${source}"\\} (\\d+)$`,
          'm',
        ).exec(scrape)?.[1] ?? 0,
      );
    expect(count('shop')).toBe(6);
    expect(count('vu')).toBe(3);
    expect(count('reg')).toBe(1);
    expect(count('loose')).toBe(0);
    expect(count('pu')).toBe(0);
  });
});
