import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, pageErrors, waitForText } from '../support/browser';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * The console refreshes itself without a reload (docs/console.md): a publication caused by
 * another source (here a second bundle's new revision; as well an upstream's `list_changed`,
 * which a hostile one can send at will) must not take from the operator the card of a tool that
 * did not change: its open Run form, the arguments typed into it, the result shown, the focus.
 */

const QUOTE = tool({
  name: 'shop.quote',
  description: 'Prices an item.',
  inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
});
const FIRST = tool({ name: 'other.first', description: 'Another source’s tool.' });
const ADDED = tool({ name: 'other.added', description: 'Published later.' });

describe('console Tools view across a publication of another source', () => {
  let shop: TestToolService;
  let other: TestToolService;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    shop = await TestToolService.start(manifest('shop', [QUOTE], 'r1'));
    other = await TestToolService.start(manifest('other', [FIRST], 'r1'));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', shop, 'shop.'), bundle('other', other, 'other.')], {
          registry: { refreshIntervalSeconds: 1 },
        }),
        http: { allowedOrigins: ['http://127.0.0.1:*'] },
      },
      waitReady: true,
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: DESKTOP });
    errors = pageErrors(page);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await other?.stop();
    await shop?.stop();
  });

  it("keeps an unchanged tool's open Run form, its typed arguments, its result and the focus", async () => {
    await page.goto(`${gateway.managementUrl}/console#tools`);
    const quote = page.locator('[data-tool="shop.quote"]');
    await quote.waitFor();
    await quote.getByRole('button', { name: 'Run', exact: true }).click();
    await quote.getByLabel('item').fill('apple');
    await quote.getByRole('button', { name: 'Run shop.quote' }).click();
    await waitForText(quote.locator('[data-field=content]'), /apple/);
    // the operator types the next arguments, not sent yet
    await quote.getByLabel('item').fill('pear');
    await quote.getByLabel('item').focus();

    other.setManifest(manifest('other', [FIRST, ADDED], 'r2'));
    await page.locator('[data-tool="other.added"]').waitFor({ timeout: 20_000 });

    const input = quote.getByLabel('item');
    const present = (await input.count()) > 0;
    expect({
      formShown: await quote.getByRole('form', { name: 'Run shop.quote' }).isVisible(),
      typed: present ? await input.inputValue() : null,
      result: await quote.locator('[data-field=content]').allTextContents(),
      focused: present && (await input.evaluate((el) => el === el.ownerDocument.activeElement)),
    }).toEqual({
      formShown: true,
      typed: 'pear',
      result: [expect.stringContaining('apple') as unknown],
      focused: true,
    });
    expect(await page.locator('#tool-count').textContent()).toBe('3 tools');
    expect(errors).toEqual([]);
  });

  it('a changed tool gets a new card; a removed one is gone', async () => {
    const first = page.locator('[data-tool="other.first"]');
    await first.getByRole('button', { name: 'Run', exact: true }).click();
    other.setManifest(
      manifest('other', [tool({ name: 'other.first', description: 'Changed.' })], 'r3'),
    );
    await waitForText(first.locator('.description'), /^Changed\.$/);
    expect(await first.getByRole('form', { name: 'Run other.first' }).count()).toBe(0);
    expect(await page.locator('[data-tool="other.added"]').count()).toBe(0);
    expect(await page.locator('#tool-count').textContent()).toBe('2 tools');
  });
});
