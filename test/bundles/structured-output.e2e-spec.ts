import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/** The example outputSchema of docs/operations.md §6 "Structured output". */
const TOTAL_SCHEMA = {
  type: 'object',
  properties: { total: { type: 'number' } },
  required: ['total'],
};

type Block = { type: string; text: string };

/**
 * docs/operations.md §6 "Structured output": a tool that declares an outputSchema answers with
 * `structuredContent` (MCP 2025-11-25: a server MUST return conforming structured results for such
 * a tool; the official v1 client's callTool throws -32600 "did not return structured content"
 * otherwise). A JSON object that conforms goes into structuredContent and stays as text; anything
 * else is an isError result with the reason.
 */
describe('structured output through a real gateway and the official SDK clients', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('shop', [
        tool({ name: 'shop.total', outputSchema: TOTAL_SCHEMA }),
        tool({
          name: 'shop.total07',
          outputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', ...TOTAL_SCHEMA },
        }),
        tool({ name: 'shop.plain' }),
      ]),
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  /** Every tool of the service answers this from now on. */
  function answer(canned: { headers?: Record<string, string>; body: unknown }): void {
    for (const name of ['shop.total', 'shop.total07', 'shop.plain']) {
      service.tools.set(name, () => canned);
    }
  }

  it('v1 Client.callTool gets structuredContent {total:42.5} for the answer {"total":42.5}, and the JSON text', async () => {
    answer({ body: { total: 42.5 } });
    const client = await connectV1(gateway.mcpUrl);
    try {
      await client.listTools(); // the client learns the outputSchema and validates against it
      const result = await client.callTool({ name: 'shop.total', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ total: 42.5 });
      expect((result.content as Block[])[0]).toMatchObject({
        type: 'text',
        text: '{"total":42.5}',
      });
    } finally {
      await client.close();
    }
  });

  it('variant: a draft-07 outputSchema is applied by its own dialect, and the v2 client gets the same', async () => {
    answer({ body: { total: 7 } });
    const client = await connectV2(gateway.mcpUrl);
    try {
      await client.listTools();
      const result = await client.callTool({ name: 'shop.total07', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ total: 7 });
    } finally {
      await client.close();
    }
  });

  it.each([
    [
      'an array answer',
      { body: [{ total: 1 }] },
      'the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered a JSON array.',
    ],
    [
      'a text/plain answer',
      { headers: { 'content-type': 'text/plain' }, body: 'total: 42.5' },
      'the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered text/plain.',
    ],
    [
      'an answer {"total":"x"}',
      { body: { total: 'x' } },
      "the Tool Service's answer does not match the tool's outputSchema: structuredContent/total must be number.",
    ],
    [
      'an answer without total',
      { body: { sum: 1 } },
      "the Tool Service's answer does not match the tool's outputSchema: structuredContent must have required property 'total'.",
    ],
  ])('v1 Client.callTool: %s becomes isError with the reason', async (_label, canned, reason) => {
    answer(canned);
    const client = await connectV1(gateway.mcpUrl);
    try {
      await client.listTools();
      const result = await client.callTool({ name: 'shop.total', arguments: {} });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      expect((result.content as Block[])[0]?.text).toBe(`Tool shop.total failed: ${reason}`);
    } finally {
      await client.close();
    }
  });

  it('a tool without an outputSchema is unchanged: text only, no structuredContent, arrays allowed', async () => {
    answer({ body: [1, 2] });
    const response = await callTool(gateway.mcpUrl, 'shop.plain', {});
    expect(response.result.isError).toBeUndefined();
    expect(response.result.structuredContent).toBeUndefined();
    expect(response.result.content[0].text).toBe('[1,2]');
  });

  it('on the wire: structuredContent sits beside content in the result', async () => {
    answer({ body: { total: 3 } });
    const response = await callTool(gateway.mcpUrl, 'shop.total', {});
    expect(response.result).toMatchObject({
      content: [{ type: 'text', text: '{"total":3}' }],
      structuredContent: { total: 3 },
    });
  });
});

/**
 * An outputSchema too large to compile on the event loop (docs/operations.md §6 "Structured
 * output"): the manifest is checked in the validation worker, and answers are checked by an
 * interpreting validator, never by an ajv compile on the main thread, which held the event
 * loop for seconds at every merge (an anyOf of 2,000 objects and 3,000 `false` patterns: 2.1 s
 * of liveness). The compile itself is counted in output-validators.spec.ts.
 */
describe('structured output of a tool whose outputSchema is too large to compile on the event loop', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const branches = 2_000;

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('wide', [
        tool({
          name: 'wide.pick',
          outputSchema: {
            type: 'object',
            anyOf: Array.from({ length: branches }, (_, i) => ({
              type: 'object',
              properties: { [`k${i}`]: { type: 'string', minLength: 1 } },
              required: [`k${i}`],
            })),
          },
        }),
        tool({ name: 'wide.selfin', inputSchema: { $ref: '#', type: 'object' } }),
        tool({ name: 'wide.selfout', outputSchema: { $ref: '#', type: 'object' } }),
        tool({
          name: 'wide.re',
          outputSchema: {
            type: 'object',
            properties: { x: { type: 'string', pattern: '^(a|a)*$' } },
          },
        }),
      ]),
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('wide', service, 'wide.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('passes a conforming answer as structuredContent and refuses one that conforms to no branch, with the reason', async () => {
    service.tools.set('wide.pick', () => ({ body: { [`k${branches - 1}`]: 'x' } }));
    const good = await callTool(gateway.mcpUrl, 'wide.pick', {});
    expect(good.result.isError).toBeUndefined();
    expect(good.result.structuredContent).toEqual({ [`k${branches - 1}`]: 'x' });

    service.tools.set('wide.pick', () => ({ body: { other: 'x' } }));
    const bad = await callTool(gateway.mcpUrl, 'wide.pick', {});
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0].text).toMatch(
      /^Tool wide\.pick failed: the Tool Service's answer does not match the tool's outputSchema: structuredContent: .+\.$/,
    );
    expect(bad.result.content[0].text).not.toMatch(/could not compile/);
  });

  it('matches an outputSchema pattern in linear time (RE2): ^(a|a)*$ against 40 a and a !, which a backtracking engine would take hours for, is refused at once', async () => {
    service.tools.set('wide.re', () => ({ body: { x: `${'a'.repeat(40)}!` } }));
    const bad = await callTool(gateway.mcpUrl, 'wide.re', {});
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0].text).toContain('structuredContent/x must match pattern');
    service.tools.set('wide.re', () => ({ body: { x: 'aaaa' } }));
    expect((await callTool(gateway.mcpUrl, 'wide.re', {})).result.structuredContent).toEqual({
      x: 'aaaa',
    });
  });

  it('a schema that refers to itself without end: its inputSchema checks nothing (the call reaches the Tool Service), its outputSchema refuses answers with the reason; never -32603', async () => {
    service.tools.set('wide.selfin', () => ({ body: { ok: true } }));
    const input = await callTool(gateway.mcpUrl, 'wide.selfin', { any: 1 });
    expect(input.error).toBeUndefined();
    expect(input.result.content[0].text).toBe('{"ok":true}');
    service.tools.set('wide.selfout', () => ({ body: { a: 1 } }));
    const output = await callTool(gateway.mcpUrl, 'wide.selfout', {});
    expect(output.error).toBeUndefined();
    expect(output.result.isError).toBe(true);
    expect(output.result.content[0].text).toContain(
      "the tool's outputSchema refers to itself without end",
    );
  });
});
