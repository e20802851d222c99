import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { waitFor } from './gateway-process';

/**
 * Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it): Playwright cannot
 * download its own browsers here (reference/auth-and-browser-notes.md).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The two viewports of docs/console.md "Keyboard, labels and screen sizes": a 1280×800 laptop and a
 * phone.
 */
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** Waits until the locator's text matches (polling: the console refreshes every few seconds). */
export async function waitForText(
  locator: Locator,
  pattern: RegExp,
  timeoutMs = 20_000,
): Promise<string> {
  let last = '';
  await waitFor(
    async () => {
      last = (await locator.count()) > 0 ? ((await locator.first().textContent()) ?? '') : '';
      return pattern.test(last);
    },
    timeoutMs,
    () => `text never matched ${String(pattern)}; last: ${JSON.stringify(last)}`,
  );
  return last;
}

/** true when nothing on the page is wider than the viewport (no sideways scrolling). */
export async function fitsWidth(page: Page): Promise<boolean> {
  // a string: the test project compiles without the DOM library
  const fits = await page.evaluate(
    'document.documentElement.scrollWidth <= document.documentElement.clientWidth',
  );
  return fits === true;
}

/** Errors the page threw or logged, collected for a test to assert there were none. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return errors;
}

/** Chromium with one desktop page and the errors that page reports. */
export interface DesktopPage {
  readonly browser: Browser;
  readonly page: Page;
  readonly errors: string[];
}

export async function openDesktopPage(): Promise<DesktopPage> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: DESKTOP });
  return { browser, page, errors: pageErrors(page) };
}
