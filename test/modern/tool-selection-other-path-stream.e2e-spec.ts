import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §16 "Tool selection" ("Per session and path": a session used on `/mcp` and
 * on a virtual server's path has one selection on each) and docs/security.md "Listen filters and
 * list changes" (`list_changed` on a 2025 GET stream is told only when the caller's own view of
 * that list changed): a selection made on a server's path changes that path's list only.
 */
describe("a selection on a server's path and the session's GET stream on another path", () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const at = (id: string): string => gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);
  const names = async (url: string, headers: Record<string, string>): Promise<string[]> =>
    ((await rpc(url, 'tools/list', {}, headers)).json.result.tools as { name: string }[]).map(
      (t) => t.name,
    );

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('p', [tool({ name: 'p.open' }), tool({ name: 'p.close' })]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('p', service, 'p.')]),
        virtualServers: [{ id: 'pick', sources: ['p'], toolSearch: true, toolSelect: true }],
      },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it("the /mcp GET stream of the same session is not told tools/list_changed, the server path's is", async () => {
    const session = await openLegacySession(at('pick'));
    const before = await names(gateway.mcpUrl, session);
    const stream = await SseReader.open(gateway.mcpUrl, 'GET', {
      accept: 'text/event-stream',
      ...session,
    });
    expect(stream.status).toBe(200);
    const onPath = await SseReader.open(at('pick'), 'GET', {
      accept: 'text/event-stream',
      ...session,
    });
    expect(onPath.status).toBe(200);
    try {
      // a client that takes no event stream on its POSTs: the selection's list_changed goes
      // to the session's GET stream
      const selected = await rpc(
        at('pick'),
        'tools/call',
        { name: 'gateway__select_tools', arguments: { names: ['p.open'] } },
        { ...session, accept: 'application/json' },
      );
      expect(selected.json.result.structuredContent.selected).toEqual(['p.open']);
      expect(await names(at('pick'), session)).toContain('p.open');
      await new Promise((r) => setTimeout(r, 1500));
      // /mcp's list for this session is what it was
      expect(await names(gateway.mcpUrl, session)).toEqual(before);
      expect(
        stream.messages.filter((m) => m.method === 'notifications/tools/list_changed'),
      ).toEqual([]);
      // the path whose list changed is told
      expect(
        onPath.messages.filter((m) => m.method === 'notifications/tools/list_changed'),
      ).toHaveLength(1);
    } finally {
      onPath.close();
      stream.close();
    }
  });
});
