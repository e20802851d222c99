import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { ButtonPage, PlaywrightMcpServer } from '../support/playwright-mcp';
import { connectClient, type AnyClient, type ClientKind } from '../support/sdk-clients';
import { echoResponder, TestToolService } from '../support/tool-service';

/** The text items of a tool result, joined. */
function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content
    .filter((item) => item.type === 'text')
    .map((item) => item.text ?? '')
    .join('\n');
}

/** The snapshot's ref of the button named `name` (`- button "Press me" [ref=e3]`). */
function buttonRef(snapshot: string, name: string): string {
  const match = new RegExp(`button "${name}" \\[ref=([^\\]]+)\\]`).exec(snapshot);
  if (match?.[1] === undefined)
    throw new Error(`no button "${name}" in the snapshot:\n${snapshot}`);
  return match[1];
}

/**
 * A real MCP server from the world through the gateway (README "Recipe: a browser for your
 * agents"): the official `@playwright/mcp` (Streamable HTTP, Debian's Chromium, headless) as
 * upstream `browser`, federated next to a Tool Service bundle. An agent of each era opens a page
 * served on 127.0.0.1 through the gateway, reads its accessibility snapshot, clicks its button by
 * the snapshot's ref, and the page shows the click (in the next snapshot, and in the request the
 * page's script sent to its server). The `mcp-orchestrator-design` seed's test of "can the
 * orchestrator drive an external MCP server".
 */
describe('@playwright/mcp federated through the gateway', () => {
  let browser: PlaywrightMcpServer;
  let page: ButtonPage;
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [browser, page, service] = await Promise.all([
      PlaywrightMcpServer.start(),
      ButtonPage.start(),
      TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })])),
    ]);
    service.tools.set('svc.echo', echoResponder);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')], {
        // a browser's first call starts Chromium: give it the time a loaded CI machine needs
        discovery: { maxToolTimeoutMillis: 60_000 },
        upstreams: [upstream('browser', browser.url, { timeouts: { callMillis: 60_000 } })],
      }),
      waitReady: true,
    });
    await waitFor(
      async () => {
        const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
        const body = (await res.json()) as { upstreams: { id: string; status: string }[] };
        return body.upstreams.find((u) => u.id === 'browser')?.status === 'healthy';
      },
      20_000,
      () => `upstream browser never healthy:\n${gateway.output}\n${browser.output}`,
    );
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await browser?.stop();
    await page?.stop();
    await service?.stop();
  });

  const agents: [string, ClientKind][] = [
    ['a 2025-11-25 agent (v1 SDK client)', 'v1'],
    ['a 2026-07-28 agent (v2 SDK client, pinned)', 'v2-pin'],
  ];

  it.each(agents)(
    '%s lists the browser tools beside the bundle tool, opens the page, reads its snapshot and clicks its button',
    async (_what, kind) => {
      const client: AnyClient = await connectClient(kind, gateway.mcpUrl);
      try {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toEqual(
          expect.arrayContaining([
            'svc.echo',
            'browser__browser_navigate',
            'browser__browser_snapshot',
            'browser__browser_click',
          ]),
        );
        const click = tools.find((t) => t.name === 'browser__browser_click');
        expect(click?.inputSchema).toMatchObject({ required: ['target'] });

        const pressedBefore = page.pressed;
        const opened = await client.callTool({
          name: 'browser__browser_navigate',
          arguments: { url: page.url },
        });
        expect(opened.isError).toBeFalsy();
        expect(textOf(opened)).toContain('Gateway button page');

        const snapshot = await client.callTool({
          name: 'browser__browser_snapshot',
          arguments: {},
        });
        const before = textOf(snapshot);
        expect(before).toContain('Not pressed');
        const ref = buttonRef(before, 'Press me');

        const clicked = await client.callTool({
          name: 'browser__browser_click',
          arguments: { element: 'Press me button', target: ref },
        });
        expect(clicked.isError).toBeFalsy();

        const after = textOf(
          await client.callTool({ name: 'browser__browser_snapshot', arguments: {} }),
        );
        expect(after).toContain('Pressed 1');
        expect(after).not.toContain('Not pressed');
        // the page's own script told its server: the click happened in a real browser
        await waitFor(
          () => page.pressed === pressedBefore + 1,
          10_000,
          () => `page saw ${page.pressed - pressedBefore} presses`,
        );

        // the bundle next to it still answers on the same session
        const echoed = await client.callTool({ name: 'svc.echo', arguments: { said: kind } });
        expect(echoed.isError).toBeFalsy();
        expect(JSON.stringify(echoed)).toContain(kind);
      } finally {
        await client.close();
      }
    },
  );

  it('a call the browser refuses is the agent’s tool error, and the upstream stays healthy', async () => {
    const client = await connectClient('v1', gateway.mcpUrl);
    try {
      const result = await client.callTool({
        name: 'browser__browser_click',
        arguments: { element: 'nothing', target: 'e9999' },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).not.toBe('');
      const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
      const body = (await res.json()) as { upstreams: { id: string; status: string }[] };
      expect(body.upstreams.find((u) => u.id === 'browser')?.status).toBe('healthy');
    } finally {
      await client.close();
    }
  });
});
