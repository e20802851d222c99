import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { modernRequest } from '../support/modern-rpc';
import { rpc } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

type Block = { type: string; text: string };

const CLAIMS = [
  tool({
    name: 'claims.open_claim',
    title: 'Open a claim',
    description: 'Opens a new insurance claim for a policy holder after an accident or loss.',
    inputSchema: {
      type: 'object',
      properties: { policyNumber: { type: 'string' }, lossDate: { type: 'string' } },
      required: ['policyNumber'],
    },
  }),
  tool({
    name: 'claims.close_claim',
    title: 'Close a claim',
    description: 'Closes a settled claim.',
  }),
  tool({
    name: 'claims.weather_at',
    title: 'Weather at a place',
    description: 'Historical weather at a location and date, to check a storm damage claim.',
  }),
];

/**
 * docs/operations.md §16 "Tool search": where it is on, tools/list gives the gateway's search,
 * describe and call tools instead of the catalog; each answers only what the caller may use on
 * that path, and call is a direct call in every respect.
 */
describe('tool search on /mcp and on a virtual server', () => {
  let claims: TestToolService;
  let gateway: GatewayProcess;
  const at = (id: string): string => gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);

  beforeAll(async () => {
    claims = await TestToolService.start(manifest('claims', CLAIMS));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('claims', claims, 'claims.')]),
        toolSearch: { enabled: true },
        virtualServers: [
          { id: 'closing', tools: ['claims.close_claim'], toolSearch: true },
          { id: 'plain', tools: ['claims.close_claim'] },
        ],
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await claims?.stop();
  });

  const callJson = async (url: string, name: string, args: object): Promise<any> => {
    const answer = await rpc(url, 'tools/call', { name, arguments: args });
    return answer.json.result;
  };

  it('tools/list gives the three search tools; search finds a tool by its task in words, describe gives its schema', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'gateway__search_tools',
        'gateway__describe_tools',
        'gateway__call_tool',
      ]);
      const found = await client.callTool({
        name: 'gateway__search_tools',
        arguments: { query: 'my car was hit, start an insurance case', limit: 2 },
      });
      const hits = (found.structuredContent as { tools: { name: string }[] }).tools;
      expect(hits[0]).toMatchObject({
        name: 'claims.open_claim',
        title: 'Open a claim',
        description: 'Opens a new insurance claim for a policy holder after an accident or loss.',
      });
      expect(hits.length).toBeLessThanOrEqual(2);
      expect(JSON.stringify(hits)).not.toContain('inputSchema');
      const described = await client.callTool({
        name: 'gateway__describe_tools',
        arguments: { names: ['claims.open_claim', 'nope'] },
      });
      expect(described.structuredContent).toMatchObject({
        tools: [{ name: 'claims.open_claim', inputSchema: { required: ['policyNumber'] } }],
        unknown: ['nope'],
      });
    } finally {
      await client.close();
    }
  });

  it('call runs the tool as a direct call would: arguments byte for byte, and checked', async () => {
    const ok = await callJson(gateway.mcpUrl, 'gateway__call_tool', {
      name: 'claims.open_claim',
      arguments: { policyNumber: 'P-1', lossDate: '2026-12-01' },
    });
    expect(ok.isError).toBeFalsy();
    const sent = claims.toolRequests('claims.open_claim');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body.toString('utf8')).toBe('{"policyNumber":"P-1","lossDate":"2026-12-01"}');
    const refused = await callJson(gateway.mcpUrl, 'gateway__call_tool', {
      name: 'claims.open_claim',
      arguments: {},
    });
    expect(refused.isError).toBe(true);
    expect((refused.content as Block[])[0]?.text).toContain('- /policyNumber: is required');
    expect(claims.toolRequests('claims.open_claim')).toHaveLength(1);
  });

  it("the gateway's tools hold their arguments to their own inputSchema: isError naming each path, nothing run", async () => {
    const cases: [string, object, RegExp][] = [
      ['gateway__search_tools', { query: 'claim', limit: 99 }, /- \/limit: must be <= 25/],
      ['gateway__search_tools', { query: 'claim', limit: 0 }, /- \/limit: must be >= 1/],
      ['gateway__search_tools', { query: 'claim', extra: 1 }, /- \/extra: is not allowed/],
      ['gateway__search_tools', { query: '   ' }, /- \/query: must say the task in words/],
      ['gateway__describe_tools', { names: [] }, /- \/names: must NOT have fewer than 1 items/],
      [
        'gateway__describe_tools',
        { names: Array.from({ length: 26 }, (_, i) => `n${i}`) },
        /- \/names: must NOT have more than 25 items/,
      ],
      [
        'gateway__call_tool',
        { name: 'claims.open_claim', arguments: 'P-1' },
        /- \/arguments: must be object/,
      ],
      [
        'gateway__call_tool',
        { name: 'gateway__search_tools', arguments: { query: 'x' } },
        /- \/name: names one of the gateway's own tools; call gateway__search_tools directly/,
      ],
    ];
    const before = claims.toolRequests('claims.open_claim').length;
    for (const [name, args, line] of cases) {
      const result = await callJson(gateway.mcpUrl, name, args);
      expect(result.isError).toBe(true);
      expect((result.content as Block[])[0]?.text).toMatch(line);
    }
    expect(claims.toolRequests('claims.open_claim')).toHaveLength(before);
    // a name given twice is described once
    const described = await callJson(gateway.mcpUrl, 'gateway__describe_tools', {
      names: ['claims.close_claim', 'claims.close_claim'],
    });
    expect(described.structuredContent.tools).toHaveLength(1);
  });

  it('on a virtual server: search and call stay within its view; a server without search lists its tools', async () => {
    const hits = (
      await callJson(at('closing'), 'gateway__search_tools', { query: 'open a new claim' })
    ).structuredContent.tools as { name: string }[];
    // the view holds close_claim only: open_claim, the best match on /mcp, is not offered here
    expect(hits.map((h) => h.name)).toEqual(['claims.close_claim']);
    const outside = await rpc(at('closing'), 'tools/call', {
      name: 'gateway__call_tool',
      arguments: { name: 'claims.open_claim', arguments: { policyNumber: 'P-2' } },
    });
    expect(outside.json.error.message).toMatch(/Tool not found/);
    const listed = await rpc(at('plain'), 'tools/list', {});
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'claims.close_claim',
    ]);
    // no search tools where search is off
    const none = await rpc(at('plain'), 'tools/call', {
      name: 'gateway__search_tools',
      arguments: { query: 'claim' },
    });
    expect(none.json.error.message).toMatch(/Tool not found/);
  });

  it('variant: a 2026 client (raw and the v2 SDK) gets the same tools and answers', async () => {
    const list = await modernRequest(gateway.mcpUrl, 'tools/list', {}, {});
    expect(list.json.result.tools).toHaveLength(3);
    const found = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'gateway__search_tools', arguments: { query: 'storm damage weather' } },
      {},
    );
    expect(found.json.result.structuredContent.tools[0].name).toBe('claims.weather_at');
    const client = await connectV2(gateway.mcpUrl);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('gateway__call_tool');
    } finally {
      await client.close();
    }
  });
});
