import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/** Twenty adjacent simple expressions between literal ends. */
const TEMPLATE = `x://${Array.from({ length: 20 }, (_, i) => `{v${i}}`).join('')}/end`;
/** The template's literal ends around a `/` the simple expressions cannot match: no match. */
const ALMOST = `x://${'a'.repeat(400)}/b/end`;
const MATCHING = `x://${'a'.repeat(400)}/end`;

/**
 * A URI template is matched in time linear in the URI (docs/operations.md §10 "Routing";
 * templateMatcher in libs/registry/src/catalog/template-index.ts): templates come from
 * upstreams and URIs from any client, and a template of adjacent expressions (`{a}{b}…`) made
 * the backtracking RegExp it was matched with try every split of a URI that has the template's
 * literal ends and does not match — seconds for ten expressions and 40 characters, and this
 * template and URI would never finish. Two ways in: a client's `resources/read` (routing looks
 * for the URI's owner), and the upstream's own tool naming such a URI as its MCP Apps view
 * (checked at every publication). Each must be answered, and the gateway stay live.
 */
describe('a URI template of adjacent expressions, and URIs made to backtrack over it', () => {
  let up: ScriptedUpstream;
  /** A second source of resources, so a URI no source claims is nobody's (not the only one's). */
  let other: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      tools: [upTool('t')],
      resourceTemplates: [{ uriTemplate: TEMPLATE, name: 'tpl' }],
    });
    other = await ScriptedUpstream.start({ resources: [{ uri: 'o://r', name: 'r' }] });
    up.on('resources/read', (req) => ({
      result: { contents: [{ uri: String(req.params?.uri), text: 'read' }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('tpl', up.url), upstream('other', other.url)],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([up?.stop(), other?.stop()]);
  });

  it("a client's resources/read of a URI that almost matches is answered as no source's; one that matches reaches the upstream", async () => {
    const almost = await rpc(gateway.mcpUrl, 'resources/read', { uri: ALMOST });
    expect(almost.status).toBe(200);
    expect(almost.json.error).toBeDefined();
    expect([...up.rpcs('resources/read'), ...other.rpcs('resources/read')]).toHaveLength(0);
    const matching = await rpc(gateway.mcpUrl, 'resources/read', { uri: MATCHING });
    expect(matching.json.result.contents[0].text).toBe('read');
    expect(up.rpcs('resources/read').map((r) => r.params?.uri)).toEqual([MATCHING]);
  });

  it("the upstream's tool naming such a URI as its view: the round publishes, and the gateway stays live", async () => {
    up.tools = [upTool('t'), upTool('v', { _meta: { ui: { resourceUri: ALMOST } } }), upTool('w')];
    // an unknown tool refreshes the sources (contract §8)
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'nope', arguments: {} });
    const listed = await rpc(gateway.mcpUrl, 'tools/list');
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toContain('tpl__w');
    expect((await fetch(`${gateway.managementUrl}/actuator/health/liveness`)).status).toBe(200);
  });
});
