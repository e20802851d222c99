import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

const QUOTE = tool({
  name: 'shop.quote',
  title: 'Price quote',
  inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
  outputSchema: { type: 'object', properties: { total: { type: 'number' } } },
  annotations: { readOnlyHint: true },
});

describe('console endpoints (docs/console.md "Endpoints it adds"): management port only, nothing from elsewhere', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [QUOTE], 'r1'));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', service, 'shop.')]),
        console: { mcpUrl: 'https://mcp.example.com/mcp' },
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it("GET / on the management port redirects to the console and names the endpoints; not on /mcp's port", async () => {
    const res = await fetch(`${gateway.managementUrl}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console');
    expect(await res.text()).toContain('/actuator/health/readiness');
    expect((await fetch(`http://127.0.0.1:${gateway.mcpPort}/`)).status).toBe(404);
  });

  it('serves the page with a policy that loads scripts and styles from the gateway only', async () => {
    const res = await fetch(`${gateway.managementUrl}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self';/);
    const html = await res.text();
    const loaded = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(loaded.length).toBeGreaterThan(0);
    // `data:,` is the empty icon (no /favicon.ico request): inline, nothing fetched
    for (const url of loaded.filter((u) => !u.startsWith('#') && u !== 'data:,')) {
      expect(url).toMatch(/^\/console\/assets\//);
      const asset = await fetch(`${gateway.managementUrl}${url}`);
      expect([url, asset.status]).toEqual([url, 200]);
    }
  });

  it('serves every module the page imports, and nothing outside the built console', async () => {
    const main = await (await fetch(`${gateway.managementUrl}/console/assets/main.js`)).text();
    const imports = [...main.matchAll(/from '\.\/([^']+)'/g)].map((m) => m[1]!);
    expect(imports).toContain('tools-view.js');
    for (const name of imports) {
      const res = await fetch(`${gateway.managementUrl}/console/assets/${name}`);
      expect([name, res.status, res.headers.get('content-type')]).toEqual([
        name,
        200,
        'text/javascript; charset=utf-8',
      ]);
    }
    for (const path of ['nope.js', '..%2F..%2Fpackage.json', '..%2Fapps%2Fgateway%2Fmain.js']) {
      const res = await fetch(`${gateway.managementUrl}/console/assets/${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });

  it('tells the page the configured /mcp URL and the bound PORT', async () => {
    const settings = await (await fetch(`${gateway.managementUrl}/console/settings`)).json();
    expect(settings).toEqual({
      identity: 'mcp-gateway-test',
      version: expect.any(String),
      profile: 'local',
      mcpUrl: 'https://mcp.example.com/mcp',
      mcpPort: gateway.mcpPort,
    });
  });

  it('GET /actuator/catalog/tools: each published tool with its schemas and its source', async () => {
    const answer = await (await fetch(`${gateway.managementUrl}/actuator/catalog/tools`)).json();
    expect(answer).toEqual({
      publishedAt: (await gateway.toolBundles()).catalog.publishedAt,
      tools: [
        {
          name: 'shop.quote',
          title: 'Price quote',
          description: '[marker:shop.quote] a test tool',
          inputSchema: QUOTE.inputSchema,
          outputSchema: QUOTE.outputSchema,
          annotations: { readOnlyHint: true },
          source: { kind: 'bundle', id: 'shop' },
        },
      ],
    });
  });

  it('GET /actuator/catalog/history: the first publication with its names and revision', async () => {
    const answer: any = await (
      await fetch(`${gateway.managementUrl}/actuator/catalog/history`)
    ).json();
    expect(answer.capacity).toBe(50);
    expect(answer.entries).toEqual([
      expect.objectContaining({
        kind: 'published',
        seq: 1,
        toolCount: 1,
        added: ['shop.quote'],
        removed: [],
        changed: [],
        revisions: { shop: { from: null, to: 'r1' } },
      }),
    ]);
  });

  it('none of it is reachable on the /mcp port', async () => {
    for (const path of ['/console', '/console/settings', '/actuator/catalog/tools']) {
      const res = await fetch(`http://127.0.0.1:${gateway.mcpPort}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});
