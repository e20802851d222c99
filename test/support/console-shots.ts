import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './gateway-process';

/**
 * Where the console tests put their screenshots: `docs/console/` (what docs/console.md shows)
 * only with UPDATE_CONSOLE_SCREENSHOTS=1, so `npm test` leaves the tracked images alone;
 * otherwise a temp folder (the screenshots are still taken: a page that cannot be drawn fails).
 */
export const CONSOLE_SHOTS =
  process.env.UPDATE_CONSOLE_SCREENSHOTS === '1'
    ? join(REPO_ROOT, 'docs', 'console')
    : mkdtempSync(join(tmpdir(), 'console-shots-'));
