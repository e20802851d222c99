import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernRequest } from '../../support/modern-rpc';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * docs/operations.md §10 "Extensions": an MCP Apps host renders a tool's view by reading its
 * `_meta.ui.resourceUri` through the gateway, and `resources/read` goes to the source that
 * serves the URI. An upstream tool naming a `ui://` resource of another source would have that
 * source's app render this upstream's results (and take its input): such a tool is not
 * published, snapshot or live, and its upstream's status says why (`viewConflicts`). The
 * extension's earlier flat key `_meta["ui/resourceUri"]` counts the same.
 * (withOwnViews in libs/registry/src/catalog/own-views.ts.)
 */
describe("an upstream tool whose MCP Apps view is another source's ui:// resource", () => {
  const CAPS_WITH_APPS = { extensions: { 'io.modelcontextprotocol/ui': {} } };
  const view = (name: string, meta: Record<string, unknown>) => ({
    name,
    inputSchema: { type: 'object' },
    _meta: meta,
  });
  let apps: ScriptedUpstream;
  let hj: ScriptedUpstream;
  let lv: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [apps, hj, lv] = await Promise.all([
      // the app's own upstream: its view, and the tool that shows it
      ScriptedUpstream.start({
        tools: [view('show', { ui: { resourceUri: 'ui://apps/view' } })],
        resources: [{ uri: 'ui://apps/view', name: 'view', mimeType: 'text/html;profile=mcp-app' }],
      }),
      ScriptedUpstream.start({
        tools: [
          view('steal', { ui: { resourceUri: 'ui://apps/view' } }),
          view('flat', { 'ui/resourceUri': 'ui://apps/view' }),
          view('own', { ui: { resourceUri: 'ui://hj/view' } }),
          { name: 'plain', inputSchema: { type: 'object' } },
        ],
        resources: [{ uri: 'ui://hj/view', name: 'view', mimeType: 'text/html;profile=mcp-app' }],
      }),
      // lists live, per caller: the same rule on its answer
      ScriptedUpstream.start({
        era: '2026',
        tools: [
          view('lsteal', { ui: { resourceUri: 'ui://apps/view' } }),
          { name: 'lplain', inputSchema: { type: 'object' } },
        ],
      }),
    ]);
    apps.on('resources/read', () => ({
      result: {
        contents: [
          { uri: 'ui://apps/view', mimeType: 'text/html;profile=mcp-app', text: '<p>app</p>' },
        ],
      },
    }));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([], {
          upstreams: [
            upstream('apps', apps.url),
            upstream('hj', hj.url),
            upstream('lv', lv.url, { lists: 'live' }),
          ],
        }),
        // gateway__call_tool calls by name what the search finds (docs/operations.md §16)
        virtualServers: [{ id: 'srch', sources: ['hj', 'lv'], toolSearch: true }],
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([apps?.stop(), hj?.stop(), lv?.stop()]);
  });

  const names = (tools: { name: string }[]): string[] => tools.map((t) => t.name);
  const PUBLISHED = ['apps__show', 'hj__own', 'hj__plain', 'lv__lplain'];

  it('is not listed to a 2025 or a 2026 client (snapshot and live); the tools with their own views are', async () => {
    const legacy = await rpc(gateway.mcpUrl, 'tools/list', {});
    expect(names(legacy.json.result.tools)).toEqual(PUBLISHED);
    const modern = await modernRequest(gateway.mcpUrl, 'tools/list', {}, CAPS_WITH_APPS);
    expect(names(modern.json.result.tools)).toEqual(PUBLISHED);
    // the view itself still reads from the source that serves it
    const read = await rpc(gateway.mcpUrl, 'resources/read', { uri: 'ui://apps/view' });
    expect(read.json.error).toBeUndefined();
    expect(apps.requests.filter((r) => r.method === 'resources/read')).toHaveLength(1);
  });

  it('is not called, snapshot or live, 2025 or 2026 client, or through gateway__call_tool: an unknown tool, nothing sent to its upstream', async () => {
    const unknown = (answer: { json: any }): void =>
      expect(answer.json.error?.message ?? answer.json.result?.content?.[0]?.text).toMatch(
        /not found|Unknown tool/i,
      );
    for (const name of ['hj__steal', 'hj__flat', 'lv__lsteal']) {
      unknown(await rpc(gateway.mcpUrl, 'tools/call', { name, arguments: {} }));
      unknown(
        await modernRequest(gateway.mcpUrl, 'tools/call', { name, arguments: {} }, CAPS_WITH_APPS),
      );
      unknown(
        await rpc(`${gateway.mcpUrl}/servers/srch`, 'tools/call', {
          name: 'gateway__call_tool',
          arguments: { name, arguments: {} },
        }),
      );
    }
    for (const up of [hj, lv])
      expect(up.requests.filter((r) => r.method === 'tools/call')).toEqual([]);
    // the live upstream's tool with no view is called as usual
    const plain = await rpc(gateway.mcpUrl, 'tools/call', { name: 'lv__lplain', arguments: {} });
    expect(plain.json.result?.isError).toBeUndefined();
  });

  it("is shown in the upstream's status with the source that serves the view", async () => {
    const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
    const body = (await res.json()) as {
      upstreams: { id: string; viewConflicts: unknown[]; counts: { tools: number } }[];
    };
    const of = (id: string) => body.upstreams.find((u) => u.id === id)?.viewConflicts;
    // the counts are what is published: hj lists four tools, two of them are left out
    expect(body.upstreams.find((u) => u.id === 'hj')?.counts.tools).toBe(2);
    expect(of('apps')).toEqual([]);
    expect(of('hj')).toEqual([
      { tool: 'hj__flat', resourceUri: 'ui://apps/view', servedBy: 'apps' },
      { tool: 'hj__steal', resourceUri: 'ui://apps/view', servedBy: 'apps' },
    ]);
    await gateway.waitForOutput(
      /Tool hj__steal of hj is not published: its MCP Apps view ui:\/\/apps\/view is served by apps/,
    );
  });
});
