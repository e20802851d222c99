import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, pageErrors, waitForText } from '../support/browser';
import { CONSOLE_SHOTS } from '../support/console-shots';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { TestToolService } from '../support/tool-service';

const ADMIN_TOKEN = 'console-e2e-admin-5c1f0a';

/** A port on 127.0.0.1 that nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startGateway(
  service: TestToolService,
  configured: V1Upstream,
  env: Record<string, string>,
): Promise<GatewayProcess> {
  return GatewayProcess.start({
    mcp: {
      ...gatewayConfig([bundle('shop', service, 'shop.')], {
        registry: { refreshIntervalSeconds: 2 },
        upstreams: [upstream('repo', configured.url)],
      }),
      http: { allowedOrigins: ['http://127.0.0.1:*'] },
    },
    // the local profile allows registering servers on loopback
    // (docs/operations.md §15 "What may be registered")
    env: { APP_PROFILE: 'local', ...env },
    waitReady: true,
  });
}

describe('console access (docs/console.md "Access"): without the admin role the console is read-only', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let browser: Browser;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    repo = await V1Upstream.start();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await repo?.stop();
    await service?.stop();
  });

  it('without MCP_ADMIN_TOKEN: no registration form, no enable, disable or delete, and it says why', async () => {
    const gateway = await startGateway(service, repo, {});
    const page = await browser.newPage({ viewport: DESKTOP });
    try {
      await page.goto(`${gateway.managementUrl}/console`);
      const note = page.locator('[data-field=read-only]');
      expect(await waitForText(note, /^Read-only: /)).toMatch(/admin/);
      expect(await page.locator('#register-form').count()).toBe(0);
      await page.locator('[data-source=repo]').waitFor();
      expect(await page.getByRole('button', { name: /^(Enable|Disable|Delete) / }).count()).toBe(0);
      // a token typed in does not make it writable: the gateway has no admin check to pass
      await page.getByLabel('Admin token').fill('anything');
      await page.getByRole('button', { name: 'Use token' }).click();
      await waitForText(page.locator('#access'), /^Read-only: /);
      expect(await page.locator('#register-form').count()).toBe(0);
    } finally {
      await page.close();
      await gateway.stop();
    }
  });
});

// These drive the registration API (docs/operations.md §15 "Routes"; branch `admin`) through the
// console.
describe('console registration (docs/console.md "Sources"): register an upstream and watch its state', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let fresh: V1Upstream;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [tool({ name: 'shop.ping' })]));
    repo = await V1Upstream.start();
    fresh = await V1Upstream.start();
    gateway = await startGateway(service, repo, { MCP_ADMIN_TOKEN: ADMIN_TOKEN });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: DESKTOP });
    errors = pageErrors(page);
    // every text the registration status line shows, in order
    // (a string: the test project compiles without the DOM library)
    await page.addInitScript(`
      window.statusLog = [];
      new MutationObserver(() => {
        const text = document.querySelector('#register-status')?.textContent ?? '';
        if (text !== '' && window.statusLog[window.statusLog.length - 1] !== text)
          window.statusLog.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    `);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await fresh?.stop();
    await repo?.stop();
    await service?.stop();
  });

  const statusLog = async (): Promise<string[]> => page.evaluate<string[]>('window.statusLog');
  const card = (id: string) => page.locator(`[data-source="${id}"]`);

  async function register(id: string, url: string): Promise<void> {
    const form = page.locator('#register-form');
    await form.getByLabel('Id').fill(id);
    await form.getByLabel('URL').fill(url);
    await form.getByRole('button', { name: 'Register' }).click();
  }

  it('is read-only until the admin token is entered, and refuses a wrong one', async () => {
    const tokenless: string[] = [];
    const onRequest = (r: { url(): string; method(): string }): void => {
      if (r.url().endsWith('/admin/upstreams')) tokenless.push(r.method());
    };
    page.on('request', onRequest);
    await page.goto(`${gateway.managementUrl}/console`);
    expect(await waitForText(page.locator('[data-field=read-only]'), /^Read-only: /)).toMatch(
      /enter the admin token/,
    );
    // two more polls: /admin, which refused the console without a token, is not asked again
    // without one (each would be a 401 in the browser's console)
    for (let poll = 0; poll < 2; poll++)
      await page.waitForRequest((r) => r.url().endsWith('/actuator/toolBundles'), {
        timeout: 10_000,
      });
    page.off('request', onRequest);
    expect(tokenless).toEqual(['GET']);
    await page.getByLabel('Admin token').fill('wrong-token');
    await page.getByRole('button', { name: 'Use token' }).click();
    await waitForText(page.locator('#access'), /the admin token was refused \(HTTP 401/);
    expect(await page.locator('#register-form').count()).toBe(0);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('#register-form').waitFor();
    expect(await page.locator('#access').textContent()).toBe('Admin: changes allowed.');
    // configured upstreams stay read-only
    expect(await card('repo').getByRole('button').count()).toBe(0);
    // the polls that follow carry the token: /admin is asked without one only when it is entered
    const bare: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/admin/upstreams') && r.headers().authorization === undefined)
        bare.push(r.method());
    });
    const polled = page.waitForRequest((r) => r.url().endsWith('/admin/upstreams'), {
      timeout: 10_000,
    });
    await polled;
    await page.waitForRequest((r) => r.url().endsWith('/admin/upstreams'), { timeout: 10_000 });
    expect(bare).toEqual([]);
  });

  it('registers an upstream and shows it go PENDING → ACTIVE, and its tools join the Tools view', async () => {
    await register('fresh', fresh.url);
    await waitForText(card('fresh').locator('[data-field=state]'), /^ACTIVE$/);
    const log = await statusLog();
    const pending = log.findIndex((t) => /^fresh is PENDING/.test(t));
    const active = log.findIndex((t) => /^fresh is ACTIVE/.test(t));
    expect({ log, pending: pending >= 0, after: active > pending }).toEqual({
      log,
      pending: true,
      after: true,
    });
    expect(Number(await card('fresh').locator('[data-field=tools]').textContent())).toBeGreaterThan(
      0,
    );
    // a page without the admin token (a context of its own) still tells registered from
    // configured: /actuator/upstreams names each one's origin
    const reader = await browser.newPage({ viewport: DESKTOP });
    try {
      await reader.goto(`${gateway.managementUrl}/console#sources`);
      const kind = (id: string) => reader.locator(`[data-source="${id}"] .kind`);
      expect(await waitForText(kind('fresh'), /registered/)).toBe(
        'upstream MCP server (registered)',
      );
      expect(await kind('repo').textContent()).toBe('upstream MCP server (configured, read-only)');
    } finally {
      await reader.close();
    }
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await page.locator('[data-tool^="fresh__"]').first().waitFor();
    await page.goto(`${gateway.managementUrl}/console#sources`);
  });

  it('registers an unreachable upstream and shows FAILED with its reason', async () => {
    const port = await closedPort();
    await register('ghost', `http://127.0.0.1:${port}/mcp`);
    await waitForText(card('ghost').locator('[data-field=state]'), /^FAILED$/);
    expect(await card('ghost').locator('[data-field=reason]').textContent()).toMatch(/\w+/);
    expect(await waitForText(page.locator('#register-status'), /^ghost is FAILED: /)).toMatch(
      /FAILED: \S+/,
    );
  });

  it('shows the 409 of an id that another source holds, naming it, and registers nothing', async () => {
    await register('repo', fresh.url);
    expect(await waitForText(page.locator('#register-status'), /^Not registered: /)).toMatch(
      /repo/,
    );
    expect(await card('repo').locator('[data-field=state]').textContent()).not.toBe('PENDING');
  });

  it('disables, enables and deletes a registered upstream', async () => {
    await card('fresh').getByRole('button', { name: 'Disable fresh' }).click();
    await waitForText(card('fresh').locator('[data-field=state]'), /^DISABLED$/);
    await card('fresh').getByRole('button', { name: 'Enable fresh' }).click();
    await waitForText(card('fresh').locator('[data-field=state]'), /^(PENDING|ACTIVE)$/);
    page.once('dialog', (dialog) => void dialog.accept());
    await card('fresh').getByRole('button', { name: 'Delete fresh' }).click();
    await card('fresh').waitFor({ state: 'detached', timeout: 20_000 });
    await page.screenshot({
      path: join(CONSOLE_SHOTS, 'sources-admin.png'),
      fullPage: true,
    });
    expect(errors).toEqual([]);
  });
});
