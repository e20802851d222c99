import type { Browser, Page } from 'playwright-core';
import { openDesktopPage, waitForText } from '../support/browser';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * docs/console.md "Tools" and docs/operations.md §16: with virtual servers configured, the Tools
 * view has a server picker; picking one shows that server's tools and "Run" goes through its path.
 */
describe('console: the virtual server picker under Tools', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('shop', [tool({ name: 'shop.ping' }), tool({ name: 'shop.order' })]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', service, 'shop.')]),
        virtualServers: [{ id: 'pings', title: 'Pings', tools: ['shop.ping'] }],
        // the console (management port) calls /mcp (another port): its origin must be allowed
        http: { allowedOrigins: ['http://127.0.0.1:*'] },
      },
      waitReady: true,
    });
    ({ browser, page, errors } = await openDesktopPage());
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await service?.stop();
  });

  const card = (name: string) => page.locator(`.tool[data-tool="${name}"]`);

  it("shows the picked server's tools and runs them through its path", async () => {
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await card('shop.order').waitFor();
    expect(await page.locator('.tool:visible').count()).toBe(2);
    await page.getByLabel('Virtual server').selectOption('pings');
    expect(await page.locator('.tool:visible').count()).toBe(1);
    expect(await card('shop.ping').isVisible()).toBe(true);
    expect(await page.locator('#mcp-url').textContent()).toMatch(/\/mcp\/servers\/pings$/);
    await card('shop.ping').getByRole('button', { name: 'Run', exact: true }).click();
    await card('shop.ping').getByRole('button', { name: 'Run shop.ping' }).click();
    await waitForText(card('shop.ping').locator('[data-field=isError]'), /^false$/);
    expect(service.toolRequests('shop.ping')).toHaveLength(1);
    await page.getByLabel('Virtual server').selectOption('');
    expect(await page.locator('.tool:visible').count()).toBe(2);
    expect(await page.locator('#mcp-url').textContent()).toMatch(/\/mcp$/);
    expect(errors).toEqual([]);
  });
});
