import { ADMIN_TOKEN, admin } from '../admin/admin-support';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { modernListen, modernRequest } from '../support/modern-rpc';
import { openLegacySession, rpc } from '../support/rpc';
import { SseReader } from '../support/sse-reader';
import { TestToolService } from '../support/tool-service';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/**
 * Notification streams on a virtual server's path (docs/operations.md §16): a view by tags is
 * resolved against each published catalog, for the path's lists whatever streams are open on
 * it; a registered server deleted or replaced ends what was opened on its path; a listen's
 * closing result names the server, as every 2026 result on its path does.
 */
describe('notification streams on virtual server paths', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const at = (id: string): string => gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);
  const tagged = (name: string, tag: string, description = `${name}, ${tag}`) =>
    tool({ name, description, meta: { tags: [tag] } });
  let revision = 1;
  /** Publishes the tools, tagged as given, at once (an unknown tool's call refreshes). */
  const publish = async (tools: Record<string, unknown>[]): Promise<void> => {
    revision += 1;
    service.setManifest(manifest('p', tools, `r${revision}`));
    await rpc(gateway.mcpUrl, 'tools/call', { name: 'p.nope', arguments: {} });
    const expected = tools.map((t) => String(t.description)).sort();
    await waitFor(async () => {
      const listed = (await rpc(gateway.mcpUrl, 'tools/list', {})).json.result.tools as {
        description: string;
      }[];
      return JSON.stringify(listed.map((t) => t.description).sort()) === JSON.stringify(expected);
    }, 10_000);
  };
  const namesOn = async (url: string): Promise<string[]> =>
    ((await rpc(url, 'tools/list', {})).json.result.tools as { name: string }[])
      .map((t) => t.name)
      .sort();

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('p', [tagged('p.public', 'team'), tagged('p.s1', 'team'), tagged('p.s2', 'team')]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('p', service, 'p.')]),
        virtualServers: [
          { id: 'team', tags: ['team'] },
          { id: 'named', title: 'Named', sources: ['p'] },
        ],
      },
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it.each([
    ['a 2025 GET stream', 'p.s1'],
    ['a 2026 listen', 'p.s2'],
  ])(
    'with %s open on the path, a tool tagged out of the view leaves the path’s list (both eras) and the stream is told',
    async (kind, leaving) => {
      const before = await namesOn(at('team'));
      expect(before).toContain(leaving);
      let stream: SseReader;
      if (kind === 'a 2025 GET stream') {
        const session = await openLegacySession(at('team'));
        stream = await SseReader.open(at('team'), 'GET', {
          accept: 'text/event-stream',
          ...session,
        });
        expect(stream.status).toBe(200);
      } else {
        stream = await modernListen(at('team'), 'L', { toolsListChanged: true }, {});
        await stream.waitForMessage(() => true);
      }
      try {
        const stays = before.filter((name) => name !== leaving);
        await publish([
          ...stays.map((name) => tagged(name, 'team')),
          tagged(leaving, 'other', `${leaving} now private`),
        ]);
        await stream.waitForMessage((m) => m.method === 'notifications/tools/list_changed');
        expect(await namesOn(at('team'))).toEqual(stays);
        const modern = await modernRequest(at('team'), 'tools/list', {}, {});
        expect(modern.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(stays);
        const call = await rpc(at('team'), 'tools/call', { name: leaving, arguments: {} });
        expect(call.json.error.message).toContain('Tool not found');
      } finally {
        stream.close();
      }
    },
  );

  it('a registered server deleted or replaced ends the GET streams and listens opened on its path', async () => {
    for (const change of ['DELETE', 'PUT'] as const) {
      const created = await admin(gateway, 'POST', '/admin/servers', { id: 'reg', sources: ['p'] });
      expect(created.status).toBe(201);
      const session = await openLegacySession(at('reg'));
      const get = await SseReader.open(at('reg'), 'GET', {
        accept: 'text/event-stream',
        ...session,
      });
      expect(get.status).toBe(200);
      const listen = await modernListen(at('reg'), 'L', { toolsListChanged: true }, {});
      await listen.waitForMessage(() => true);
      try {
        const changed =
          change === 'DELETE'
            ? await admin(gateway, 'DELETE', '/admin/servers/reg')
            : await admin(gateway, 'PUT', '/admin/servers/reg', {
                id: 'reg',
                sources: ['p'],
                title: 'Replaced',
              });
        expect(changed.status).toBe(200);
        await get.waitForEnd();
        await listen.waitForEnd();
        // the listen ends as the gateway ends it: with its closing result
        expect(listen.messages.at(-1)).toMatchObject({
          id: 'L',
          result: { resultType: 'complete' },
        });
      } finally {
        get.close();
        listen.close();
      }
      if (change === 'PUT')
        expect((await admin(gateway, 'DELETE', '/admin/servers/reg')).status).toBe(200);
    }
  });

  it("a listen's closing result on a server's path names that server, as the path's other results do", async () => {
    const list = await modernRequest(at('named'), 'tools/list', {}, {});
    expect(list.json.result._meta[SERVER_INFO]).toMatchObject({ title: 'Named' });
    // nothing to honour: acknowledged, then closed with the closing result at once
    const listen = await modernListen(
      at('named'),
      'L',
      { resourceSubscriptions: ['nope://x'] },
      {},
    );
    await listen.waitForEnd();
    const closing = listen.messages.find((m) => m.result !== undefined);
    expect(closing?.result._meta[SERVER_INFO]).toEqual(list.json.result._meta[SERVER_INFO]);
  });
});
