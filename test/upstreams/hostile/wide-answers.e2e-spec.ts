import { GatewayProcess } from '../../support/gateway-process';
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
});
