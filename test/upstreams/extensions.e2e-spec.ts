import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  APP_MIME_TYPE,
  AppsUpstream,
  RECEIPTS_EXTENSION,
  UI_EXTENSION,
} from '../support/apps-upstream';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { postRaw } from '../support/rpc';
import { connectClient, connectV1, type AnyClient, type ClientKind } from '../support/sdk-clients';

const UI_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((item) => item.text ?? '').join('\n');
}

/**
 * Extensions through the gateway (docs/operations.md §10 "Extensions"). Toward an upstream the
 * gateway declares what agents may use: the MCP Apps extension and URL-mode elicitation, so an
 * upstream that decides its tools at `initialized` (the ext-apps pattern) offers its app tools.
 * Toward each agent it gives only what that agent's own declaration allows: an agent without the
 * UI extension does not get the tools only an app's view may call, and is not sent a URL-mode
 * elicitation it did not declare. The upstreams' declared `extensions` reach the agents in
 * `initialize` and `server/discover`.
 */
describe('extensions negotiated through the gateway', () => {
  let apps: AppsUpstream;
  /** The same upstream as a `lists: live` source (its tools in no catalog, listed per request). */
  let liveApps: AppsUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [apps, liveApps] = await Promise.all([
      AppsUpstream.start(),
      // a view of its own: one that `apps` serves would keep its view tools out of the list
      AppsUpstream.start('ui://weather-live/view.html'),
    ]);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          // cacheable lists (docs/operations.md §11 "Cache hints"), but not one that has app-only tools
          upstream('apps', apps.url, { cacheScope: 'public', cacheTtlMillis: 60_000 }),
          upstream('liveapps', liveApps.url, { lists: 'live' }),
        ],
      }),
      waitReady: true,
    });
    await waitFor(
      async () => {
        const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
        const body = (await res.json()) as { upstreams: { id: string; status: string }[] };
        return ['apps', 'liveapps'].every(
          (id) => body.upstreams.find((u) => u.id === id)?.status === 'healthy',
        );
      },
      15_000,
      () => `upstream apps never healthy:\n${gateway.output}`,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await apps?.stop();
    await liveApps?.stop();
  });

  it('declares the MCP Apps extension and URL-mode elicitation to the upstream, so it offers its app tools', () => {
    expect(apps.sessionCapabilities.length).toBeGreaterThanOrEqual(1);
    for (const declared of apps.sessionCapabilities) {
      expect(declared).toMatchObject({
        extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
        elicitation: { form: {}, url: {} },
        sampling: {},
        roots: {},
      });
    }
  });

  const kinds: ClientKind[] = ['v1', 'v2-pin'];

  it.each(kinds)(
    '%s: initialize / server/discover declare the extensions the upstream declared',
    async (kind) => {
      const client: AnyClient = await connectClient(kind, gateway.mcpUrl);
      try {
        const capabilities = client.getServerCapabilities() as Record<string, unknown>;
        expect(capabilities.extensions).toEqual({
          [UI_EXTENSION]: {},
          [RECEIPTS_EXTENSION]: { version: 2 },
        });
      } finally {
        await client.close();
      }
    },
  );

  it.each(kinds)(
    '%s that declared MCP Apps gets the app tool with its view and the view-only tool, and may call it',
    async (kind) => {
      const client = await connectClient(kind, gateway.mcpUrl, { capabilities: UI_CAPABILITIES });
      try {
        const { tools } = await client.listTools();
        const weather = tools.find((t) => t.name === 'apps__weather');
        expect(weather?._meta).toEqual({ ui: { resourceUri: 'ui://weather/view.html' } });
        expect(tools.map((t) => t.name)).toContain('apps__weather_refresh');
        expect(tools.map((t) => t.name)).toContain('liveapps__weather_refresh');
        for (const name of ['apps__weather_refresh', 'liveapps__weather_refresh']) {
          const refreshed = await client.callTool({ name, arguments: {} });
          expect(textOf(refreshed)).toBe('refreshed');
        }
      } finally {
        await client.close();
      }
    },
  );

  it.each(kinds)(
    '%s that did not declare MCP Apps is not given the view-only tool: not listed, and called it is an unknown tool',
    async (kind) => {
      const client = await connectClient(kind, gateway.mcpUrl);
      try {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toContain('apps__weather');
        expect(names).toContain('apps__confirm_link');
        expect(names).not.toContain('apps__weather_refresh');
        expect(names).toContain('liveapps__weather');
        expect(names).not.toContain('liveapps__weather_refresh');
        // the tool a model may call still works: its text is for any host
        expect(textOf(await client.callTool({ name: 'apps__weather', arguments: {} }))).toMatch(
          /^sunny/,
        );
        for (const name of ['apps__weather_refresh', 'liveapps__weather_refresh'])
          await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(
            new RegExp(`Tool not found: ${name}`),
          );
      } finally {
        await client.close();
      }
    },
  );

  it('a 2026 tools/list with app-only tools is private in its cache hints, whether or not the client declared MCP Apps', async () => {
    for (const capabilities of [{}, UI_CAPABILITIES]) {
      const answer = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': capabilities,
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            },
          },
        }),
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.json.result.cacheScope).toBe('private');
    }
  });

  it('a URL-mode elicitation reaches a 2025 client that declared URL mode, and is refused for one that declared form mode only', async () => {
    const asked: unknown[] = [];
    const withUrl = await connectV1(gateway.mcpUrl, {}, { elicitation: { form: {}, url: {} } });
    const formOnly = await connectV1(gateway.mcpUrl, {}, { elicitation: { form: {} } });
    try {
      withUrl.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params);
        return { action: 'accept' };
      });
      formOnly.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params);
        return { action: 'accept' };
      });
      const accepted = await withUrl.callTool({ name: 'apps__confirm_link', arguments: {} });
      expect(textOf(accepted)).toBe('answered: accept');
      expect(asked).toEqual([
        expect.objectContaining({ mode: 'url', url: 'https://example.com/confirm' }),
      ]);

      const refused = await formOnly.callTool({ name: 'apps__confirm_link', arguments: {} });
      expect(textOf(refused)).toMatch(/^not asked: .*elicitation\.url/);
      expect(asked).toHaveLength(1);
    } finally {
      await withUrl.close();
      await formOnly.close();
    }
  });
});
