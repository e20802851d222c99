import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernRequest } from '../../support/modern-rpc';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/** 300,000 empty objects: 900 KB, far under the 8 MiB answer cap, over the 250,000 values parsed. */
const WIDE = Array.from({ length: 300_000 }, () => ({}));
/** 200,000 zeros: under the value limit, passed on. */
const NARROW = Array.from({ length: 200_000 }, () => 0);

/**
 * docs/operations.md §2: an answer is parsed only when it holds at most 250,000 JSON values
 * (MAX_PARSED_VALUES). Parsed, 2.6 million `{}` in 7.8 MB took ~340 MB and half a second of the
 * event loop; the byte cap alone does not bound that. An upstream's answer with more is refused
 * unparsed: -32603 for a method, an isError result for tools/call, in both client eras.
 */
describe('an upstream whose answers hold millions of tiny JSON values', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [upTool('wide'), upTool('narrow')],
      resources: [{ uri: 'w://wide', name: 'wide' }],
      prompts: [{ name: 'p' }],
    });
    up.on('resources/read', () => ({ result: { contents: WIDE } }));
    up.onTool('wide', () => ({
      result: { content: [{ type: 'text', text: 'x' }], structuredContent: { rows: WIDE } },
    }));
    up.onTool('narrow', () => ({
      result: { content: [{ type: 'text', text: 'x' }], structuredContent: { rows: NARROW } },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('resources/read of one is -32603', async () => {
    const answer = await rpc(gateway.mcpUrl, 'resources/read', { uri: 'w://wide' });
    expect(answer.json.result).toBeUndefined();
    expect(answer.json.error.code).toBe(-32603);
    expect(answer.json.error.message).toContain('more than 250000 JSON values');
  });

  it('a tools/call of one is an isError result to a 2026 client too', async () => {
    const answer = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'up__wide', arguments: {} },
      {},
    );
    expect(answer.json.result).toMatchObject({ isError: true, resultType: 'complete' });
    expect(answer.json.result.content[0].text).toContain('more than 250000 JSON values');
  });

  it('a tools/call of one is an isError result; one of 200,000 values goes on', async () => {
    const wide = await rpc(gateway.mcpUrl, 'tools/call', { name: 'up__wide', arguments: {} });
    expect(wide.json.result.isError).toBe(true);
    expect(wide.json.result.content[0].text).toContain('more than 250000 JSON values');
    const narrow = await rpc(gateway.mcpUrl, 'tools/call', { name: 'up__narrow', arguments: {} });
    expect(narrow.json.result.isError).toBeFalsy();
    expect(narrow.json.result.structuredContent.rows).toHaveLength(200_000);
  });

  // a list page may hold 64 more values per item it lists than another message (§10 "Width"):
  // one of two items carrying 300,000 is refused before it is parsed, a failed pull whose last
  // good list stays; one of a hundred items of 2,000 values each is an ordinary page
  it.each([
    ['tools', 'tools/list', `{"name":"narrow","inputSchema":{"type":"object"}}`],
    ['prompts', 'prompts/list', '{"name":"p"}'],
    ['resources', 'resources/list', '{"uri":"w://wide","name":"wide"}'],
  ])(
    'a %s page of two items, one holding 300,000 values: a failed pull, the last good list stays',
    async (key, method, first) => {
      const big = JSON.stringify(WIDE);
      const second =
        key === 'tools'
          ? `{"name":"fat","inputSchema":{"type":"object"},"_meta":{"big":${big}}}`
          : key === 'prompts'
            ? `{"name":"fat","_meta":{"big":${big}}}`
            : `{"uri":"w://fat","name":"fat","_meta":{"big":${big}}}`;
      const before = (await rpc(gateway.mcpUrl, method)).json.result[key];
      up.on(method, (req) => ({
        headers: { 'content-type': 'application/json' },
        raw: `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"${key}":[${first},${second}]}}`,
      }));
      try {
        // an unknown tool refreshes the sources (contract §8)
        await rpc(gateway.mcpUrl, 'tools/call', { name: `unknown_${key}`, arguments: {} });
        const status = await fetch(`${gateway.managementUrl}/actuator/upstreams`).then(
          (r) => r.json() as Promise<{ upstreams: Record<string, unknown>[] }>,
        );
        expect(status.upstreams[0]).toMatchObject({ lastErrorType: 'UpstreamTooLargeError' });
        await waitFor(() => gateway.output.includes('more than 250128 JSON values'), 5_000);
        const after = await rpc(gateway.mcpUrl, method);
        expect(after.json.result[key]).toEqual(before);
        expect(after.text).not.toContain('fat');
      } finally {
        up.off(method);
      }
    },
  );

  it('a page of a hundred tools of 2,000 values each is published (64 a tool over the bound is room enough)', async () => {
    const schema = JSON.stringify({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 400 }, (_, i) => [`p${i}`, { type: 'string', enum: ['a', 'b'] }]),
      ),
    });
    const tools = Array.from(
      { length: 100 },
      (_, i) => `{"name":"big${i}","inputSchema":${schema}}`,
    ).join(',');
    up.on('tools/list', (req) => ({
      headers: { 'content-type': 'application/json' },
      raw: `{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"tools":[${tools}]}}`,
    }));
    try {
      await rpc(gateway.mcpUrl, 'tools/call', { name: 'unknown_big', arguments: {} });
      const names = (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map(
        (t: { name: string }) => t.name,
      );
      expect(names).toContain('up__big99');
    } finally {
      up.off('tools/list');
    }
  });
});
