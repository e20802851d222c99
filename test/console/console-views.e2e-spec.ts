import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  DESKTOP,
  PHONE,
  fitsWidth,
  launchChromium,
  pageErrors,
  waitForText,
} from '../support/browser';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestToolService } from '../support/tool-service';
import { CONSOLE_SHOTS } from '../support/console-shots';

/** The screenshots docs/console.md shows (written there with UPDATE_CONSOLE_SCREENSHOTS=1). */
const SHOTS = CONSOLE_SHOTS;

const QUOTE = tool({
  name: 'shop.quote',
  title: 'Price quote',
  description: 'Prices a quantity of one item.',
  inputSchema: {
    type: 'object',
    properties: {
      item: { type: 'string', description: 'What to price' },
      quantity: { type: 'integer', description: 'How many' },
      tier: { enum: ['basic', 'gold'] },
      express: { type: 'boolean' },
      extras: { type: 'object', description: 'Free-form options' },
    },
    required: ['item', 'quantity'],
  },
  outputSchema: {
    type: 'object',
    properties: { total: { type: 'number', description: 'Price in EUR' } },
    required: ['total'],
  },
});
const FAIL = tool({ name: 'shop.fail', description: 'Always fails.' });

describe('operator console (docs/console.md): the three views in a real browser', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    service = await TestToolService.start(manifest('shop', [QUOTE, FAIL], 'r1'));
    service.tools.set('shop.quote', (req) => {
      const args = JSON.parse(req.body.toString('utf8')) as { item: string; quantity: number };
      return { body: { item: args.item, total: args.quantity * 2.5 } };
    });
    service.tools.set('shop.fail', () => ({ status: 500, body: { error: 'out of stock' } }));
    repo = await V1Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', service, 'shop.')], {
          registry: { refreshIntervalSeconds: 2 },
          discovery: { maxToolsTotal: 30 },
          upstreams: [upstream('repo', repo.url)],
        }),
        // The console (management port) calls /mcp (another port): its origin must be allowed.
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
    await repo?.stop();
    await service?.stop();
  });

  const card = (id: string) => page.locator(`[data-source="${id}"]`);
  const toolCard = (name: string) => page.locator(`[data-tool="${name}"]`);

  it('Sources: one card per bundle and upstream with status, era, tool count, last error type, age of the copy and Redis state', async () => {
    await page.goto(`${gateway.managementUrl}/console`);
    expect(await waitForText(card('shop').locator('[data-field=status]'), /healthy/)).toBe(
      'healthy',
    );
    expect(await card('shop').locator('[data-field=tools]').textContent()).toBe('2');
    expect(await card('shop').locator('[data-field=error]').textContent()).toBe('none');
    expect(await card('shop').locator('[data-field=age]').textContent()).toMatch(
      /^remote, \d+ (s|min) old$/,
    );
    await waitForText(card('repo').locator('[data-field=status]'), /healthy/);
    expect(await card('repo').locator('[data-field=era]').textContent()).toBe('MCP 2025');
    const repoTools = (await gateway.toolBundles()).catalog.toolCount - 2;
    expect(await card('repo').locator('[data-field=tools]').textContent()).toBe(String(repoTools));
    expect(await page.locator('[data-field=redis]').textContent()).toMatch(/not configured/);
    expect(await page.locator('[data-field=catalog]').textContent()).toMatch(
      new RegExp(`^${repoTools + 2} tools, published`),
    );
    await page.screenshot({ path: join(SHOTS, 'sources.png'), fullPage: true });
  });

  it('Tools: cards grouped by source, and the search keeps only the matching ones', async () => {
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await toolCard('shop.quote').waitFor();
    const groups = await page.locator('.tool-group h3').allTextContents();
    expect(groups.map((g) => g.replace(/ \(\d+\)$/, ''))).toEqual(
      expect.arrayContaining(['Tool Service bundle shop', 'Upstream MCP server repo']),
    );
    await page.getByLabel('Search tools').fill('quote');
    expect(await page.locator('.tool:visible').count()).toBe(1);
    expect(await page.locator('#tool-count').textContent()).toMatch(/^1 of \d+ tools match/);
    await page.getByLabel('Search tools').fill('');
    expect(await page.locator('.tool:visible').count()).toBeGreaterThan(2);
  });

  it('"Schema" unfolds inputSchema and outputSchema as tables, by keyboard', async () => {
    const button = toolCard('shop.quote').getByRole('button', { name: 'Schema' });
    await button.focus();
    await page.keyboard.press('Enter');
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    const tables = toolCard('shop.quote').locator('.schema');
    const input = tables.nth(0);
    expect(await input.locator('h5').textContent()).toBe('inputSchema');
    expect(await input.locator('tbody th').allTextContents()).toEqual([
      'item',
      'quantity',
      'tier',
      'express',
      'extras',
    ]);
    expect(await input.locator('tbody tr', { hasText: 'quantity' }).textContent()).toMatch(
      /quantity\s*integer\s*yes\s*How many/,
    );
    expect(await input.locator('tbody tr', { hasText: 'tier' }).textContent()).toContain(
      'one of "basic", "gold"',
    );
    expect(await tables.nth(1).locator('h5').textContent()).toBe('outputSchema');
    expect(await tables.nth(1).locator('tbody th').allTextContents()).toEqual(['total']);
    await page.keyboard.press('Enter');
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    expect(await toolCard('shop.quote').locator('.schema').first().isVisible()).toBe(false);
  });

  it('"Run" calls the tool through /mcp with the arguments of its generated form and shows the result, isError and searchTime', async () => {
    const quote = toolCard('shop.quote');
    await quote.getByRole('button', { name: 'Run', exact: true }).click();
    await quote.getByLabel('item').fill('apple');
    await quote.getByLabel('quantity').fill('4');
    await quote.getByLabel('tier').selectOption({ label: 'gold' });
    await quote.getByLabel('express').selectOption('true');
    await quote.getByLabel('extras').fill('{"gift": true}');
    const before = service.toolRequests('shop.quote').length;
    await quote.getByRole('button', { name: 'Run shop.quote' }).click();
    await waitForText(quote.locator('[data-field=isError]'), /^false$/);
    expect(await quote.locator('[data-field=searchTime]').textContent()).toMatch(/^\d+ ms$/);
    expect(await quote.locator('[data-field=content]').first().textContent()).toContain(
      '"total": 10',
    );
    const sent = service.toolRequests('shop.quote');
    expect(sent).toHaveLength(before + 1);
    expect(JSON.parse(sent.at(-1)!.body.toString('utf8'))).toEqual({
      item: 'apple',
      quantity: 4,
      tier: 'gold',
      express: true,
      extras: { gift: true },
    });
    await page.screenshot({ path: join(SHOTS, 'tools.png'), fullPage: true });
  });

  it('a form that misses a required argument is not sent, and says which one', async () => {
    const quote = toolCard('shop.quote');
    await quote.getByLabel('item').fill('');
    const before = service.toolRequests('shop.quote').length;
    await quote.getByRole('button', { name: 'Run shop.quote' }).click();
    expect(await waitForText(quote.locator('[data-field=result]'), /Not sent/)).toContain(
      'item is required',
    );
    expect(service.toolRequests('shop.quote')).toHaveLength(before);
  });

  it('the JSON editor sends what it holds', async () => {
    const quote = toolCard('shop.quote');
    await quote.getByLabel('Edit the arguments as JSON').check();
    await quote.getByLabel('Arguments (JSON object)').fill('{"item": "pear", "quantity": 2}');
    await quote.getByRole('button', { name: 'Run shop.quote' }).click();
    await waitForText(quote.locator('[data-field=content]'), /"total": 5/);
    expect(JSON.parse(service.toolRequests('shop.quote').at(-1)!.body.toString('utf8'))).toEqual({
      item: 'pear',
      quantity: 2,
    });
  });

  it('a failing tool shows isError true', async () => {
    const fail = toolCard('shop.fail');
    await fail.getByRole('button', { name: 'Run', exact: true }).click();
    await fail.getByRole('button', { name: 'Run shop.fail' }).click();
    expect(await waitForText(fail.locator('[data-field=isError]'), /^(true|false)$/)).toBe('true');
  });

  it('Catalog history: a publication with its added name and revision, then a rejection with its reason', async () => {
    await page.goto(`${gateway.managementUrl}/console#history`);
    await page.locator('[data-kind=published]').first().waitFor();
    service.setManifest(
      manifest('shop', [QUOTE, FAIL, tool({ name: 'shop.new', description: 'New.' })], 'r2'),
    );
    const latest = page.locator('#history-list > li').first();
    await waitForText(latest, /shop\.new/);
    expect(await latest.getAttribute('data-kind')).toBe('published');
    expect(await latest.textContent()).toMatch(/Added \(1\)/);
    expect(await latest.locator('.revisions').textContent()).toBe('Revisions: shop r1 → r2');

    const many = Array.from({ length: 40 }, (_, i) => tool({ name: `shop.bulk${i}` }));
    service.setManifest(manifest('shop', many, 'r3'));
    await waitForText(latest.locator('[data-field=reason]'), /CatalogTooLargeError/);
    expect(await latest.getAttribute('data-kind')).toBe('rejected');
    expect(await latest.textContent()).toMatch(/exceed maxToolsTotal 30/);
    expect(await latest.textContent()).toMatch(/The previous catalog stayed/);
    await page.screenshot({ path: join(SHOTS, 'history.png'), fullPage: true });
  });

  it('Sources: a bundle goes degraded when its Tool Service stops, with the error type', async () => {
    service.setManifest(manifest('shop', [QUOTE, FAIL], 'r1'));
    await waitFor(async () => (await gateway.bundleStatus('shop')).revision === 'r1', 20_000);
    await page.goto(`${gateway.managementUrl}/console#sources`);
    await waitForText(card('shop').locator('[data-field=status]'), /^healthy$/);
    await service.stop();
    // no reload: the page refreshes itself
    await waitForText(card('shop').locator('[data-field=status]'), /^degraded$/);
    expect(await card('shop').locator('[data-field=error]').textContent()).toMatch(
      /^[A-Za-z]+Error$/,
    );
  });

  it('is readable at a phone width: no view scrolls sideways', async () => {
    const phone = await browser.newPage({ viewport: PHONE });
    try {
      for (const view of ['sources', 'tools', 'history']) {
        await phone.goto(`${gateway.managementUrl}/console#${view}`);
        await phone.locator(`#view-${view} h2`).first().waitFor();
        // a locator wait, not waitForFunction: a string predicate is evaluated with eval,
        // which the console's CSP (script-src 'self') refuses when the first check is false
        await waitForText(phone.locator('#updated'), /\S/);
        expect([view, await fitsWidth(phone)]).toEqual([view, true]);
      }
      await phone.goto(`${gateway.managementUrl}/console#tools`);
      await phone
        .locator('[data-tool="shop.quote"]')
        .getByRole('button', { name: 'Schema' })
        .click();
      expect(await fitsWidth(phone)).toBe(true);
      await phone.screenshot({ path: join(SHOTS, 'tools-phone.png'), fullPage: false });
    } finally {
      await phone.close();
    }
    expect(await fitsWidth(page)).toBe(true);
    expect(errors).toEqual([]);
  });
});
