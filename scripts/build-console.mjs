#!/usr/bin/env node
// Part of `npm run build`: compiles the operator console (apps/console/src, browser
// TypeScript, ES modules) into dist/console and copies its page and stylesheet beside it.
// The gateway serves dist/console at /console on the management port (docs/console.md); nothing
// the page loads comes from elsewhere.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'apps/console/tsconfig.json')], {
  stdio: 'inherit',
});
if (result.status !== 0) {
  console.error('[build-console] tsc failed; see above');
  process.exit(result.status ?? 1);
}
const publicDir = join(root, 'apps/console/public');
for (const name of readdirSync(publicDir)) copyFileSync(join(publicDir, name), join(out, name));
