import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/**
 * Agents list and call bundle tools with the official SDK clients (README.md "With the official SDK
 * client").
 */
describe('official MCP clients against bundle tools', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  const quoteSchema = {
    type: 'object',
    properties: {
      age: { type: 'integer', minimum: 18 },
      coverage: { type: 'string', enum: ['basic', 'premium'] },
    },
    required: ['age'],
  };

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('ins', [
        tool({
          name: 'ins.quote',
          title: 'Premium quote',
          inputSchema: quoteSchema,
          annotations: { readOnlyHint: true },
          meta: { timeoutMillis: 2000 },
        }),
        tool({ name: 'ins.claim', description: 'Claim status' }),
        tool({ name: 'ins.hidden', meta: { enabled: false } }),
      ]),
    );
    service.tools.set('ins.quote', (req) => {
      const args = JSON.parse(req.body.toString('utf8'));
      if (typeof args.age !== 'number' || args.age < 18) {
        return { status: 400, body: { error: 'age must be at least 18' } };
      }
      return { body: { monthlyPremium: 43200, age: args.age } };
    });
    gateway = await GatewayProcess.start({
      // the service's own 4xx is what these clients are to see: the gateway's argument check
      // (docs/operations.md §6 "Argument validation", tested in argument-validation) is off
      mcp: gatewayConfig([bundle('ins', service, 'ins.', { validateArguments: false })]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('v1 Client lists the tools sorted by name, exactly as published, without _meta or disabled tools', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['ins.claim', 'ins.quote']);
      const quote = tools.find((t) => t.name === 'ins.quote');
      expect(quote).toEqual({
        name: 'ins.quote',
        title: 'Premium quote',
        description: '[marker:ins.quote] a test tool',
        inputSchema: quoteSchema,
        annotations: { readOnlyHint: true },
      });
      expect(JSON.stringify(tools)).not.toContain('_meta');
      expect(client.getServerVersion()?.name).toBe('mcp-gateway-test');
    } finally {
      await client.close();
    }
  });

  it('v1 Client calls a tool and gets compact JSON text with searchTime', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const result = await client.callTool({
        name: 'ins.quote',
        arguments: { age: 40, coverage: 'basic' },
      });
      expect(result.isError).toBeFalsy();
      const [block] = result.content as Array<{
        type: string;
        text: string;
        _meta: { searchTime: number };
      }>;
      expect(block?.type).toBe('text');
      expect(block?.text).toBe('{"monthlyPremium":43200,"age":40}');
      expect(typeof block?._meta.searchTime).toBe('number');
      expect(block?._meta.searchTime).toBeGreaterThanOrEqual(0);
      const sent = service.toolRequests('ins.quote').at(-1);
      expect(sent?.body.toString('utf8')).toBe('{"age":40,"coverage":"basic"}');
    } finally {
      await client.close();
    }
  });

  it('v1 Client sees a 4xx answer as an isError result carrying the status and the service error text', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const result = await client.callTool({ name: 'ins.quote', arguments: { age: 12 } });
      expect(result.isError).toBe(true);
      const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
      expect(text).toContain('400');
      expect(text).toContain('age must be at least 18');
      expect(text).not.toContain('127.0.0.1');
    } finally {
      await client.close();
    }
  });

  it('v2 Client in its default (legacy) mode lists and calls the same tools', async () => {
    const client = await connectV2(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['ins.claim', 'ins.quote']);
      const result = await client.callTool({ name: 'ins.quote', arguments: { age: 30 } });
      expect(result.isError).toBeFalsy();
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe(
        '{"monthlyPremium":43200,"age":30}',
      );
    } finally {
      await client.close();
    }
  });

  it('a disabled tool is not callable: the v1 Client gets -32001 Tool not found', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      await expect(client.callTool({ name: 'ins.hidden', arguments: {} })).rejects.toMatchObject({
        code: -32001,
      });
      expect(service.toolRequests('ins.hidden')).toHaveLength(0);
    } finally {
      await client.close();
    }
  });
});
