import type { Browser } from 'playwright-core';
import { launchChromium, waitForText } from '../support/browser';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * An operator opening the console (docs/console.md) on a gateway with no admin credential sees
 * no error in the browser's console: no request of the page fails, the browser's own favicon
 * request included (a 404 there reads as a broken page to whoever opens the developer tools).
 */
describe('console page load', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('shop', service, 'shop.')]),
      env: { APP_PROFILE: 'local' },
      waitReady: true,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await service?.stop();
  });

  it('puts no failed request and no error in the browser console', async () => {
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failures.push(`${r.status()} ${r.url()}`);
    });
    page.on('requestfailed', (r) => failures.push(`failed ${r.url()}`));
    page.on('console', (m) => {
      if (m.type() === 'error') failures.push(`console: ${m.text()}`);
    });
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await waitForText(page.locator('article[data-tool="shop.ping"] code'), /shop\.ping/);
    // one more poll of the page
    await page.waitForRequest((r) => r.url().endsWith('/actuator/toolBundles'), {
      timeout: 10_000,
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(failures).toEqual([]);
    await page.close();
  });
});
