import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, pageErrors, waitForText } from '../support/browser';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * "Run" sends the arguments its generated form holds (docs/console.md "Tools"), whatever a
 * source names its properties: a JSON Schema may name one `__proto__`, `constructor` or
 * `toString` (JSON has no reserved keys), and the operator's value for it must reach the tool.
 */

/** Parsed, not written as a literal: `{__proto__: …}` in code would set a prototype. */
const KEYS_SCHEMA = JSON.parse(
  JSON.stringify({
    type: 'object',
    properties: {
      PROTO: { type: 'string', description: 'a property named like a prototype key' },
      constructor: { type: 'string' },
      toString: { type: 'object' },
    },
  }).replaceAll('PROTO', '__proto__'),
) as Record<string, unknown>;

const KEYS = tool({
  name: 'shop.keys',
  description: 'Echoes its arguments.',
  inputSchema: KEYS_SCHEMA,
});

describe('console Run: arguments named like prototype keys', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    service = await TestToolService.start(manifest('shop', [KEYS], 'r1'));
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('shop', service, 'shop.')]),
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
    await service?.stop();
  });

  const card = () => page.locator('[data-tool="shop.keys"]');
  /** The arguments of the last call the Tool Service received, as [key, value] pairs in order. */
  const lastArguments = (): [string, unknown][] =>
    Object.entries(
      JSON.parse(service.toolRequests('shop.keys').at(-1)?.body.toString('utf8') ?? '{}') as object,
    );

  it('the form sends a value filled in for __proto__: the gateway then names it in its refusal, and nothing reaches the tool', async () => {
    await page.goto(`${gateway.managementUrl}/console#tools`);
    await card().waitFor();
    await card().getByRole('button', { name: 'Run', exact: true }).click();
    await card()
      .getByLabel(/^__proto__/)
      .fill('abc');
    await card()
      .getByLabel(/^constructor/)
      .fill('def');
    await card()
      .getByLabel(/^toString/)
      .fill('{"polluted": true}');
    await card().getByRole('button', { name: 'Run shop.keys' }).click();
    // docs/operations.md §6: a member named __proto__ is refused, never dropped unseen
    expect(
      await waitForText(card().locator('[data-field=result]'), /isError\s*(true|false)/),
    ).toMatch(/isError\s*true[\s\S]*\/__proto__: a member named __proto__ cannot be checked/);
    expect(service.toolRequests('shop.keys')).toEqual([]);
  });

  it('the JSON editor opens with every value of the form, __proto__ included', async () => {
    await card().getByLabel('Edit the arguments as JSON').check();
    const editor = card().getByLabel('Arguments (JSON object)');
    expect(Object.entries(JSON.parse(await editor.inputValue()) as object)).toEqual([
      ['__proto__', 'abc'],
      ['constructor', 'def'],
      ['toString', { polluted: true }],
    ]);
    await card().getByLabel('Edit the arguments as JSON').uncheck();
  });

  it('without __proto__, constructor and toString reach the tool as filled in', async () => {
    await card()
      .getByLabel(/^__proto__/)
      .fill('');
    await card().getByRole('button', { name: 'Run shop.keys' }).click();
    await waitForText(card().locator('[data-field=isError]'), /^false$/);
    expect(lastArguments()).toEqual([
      ['constructor', 'def'],
      ['toString', { polluted: true }],
    ]);
    expect(errors).toEqual([]);
  });
});
