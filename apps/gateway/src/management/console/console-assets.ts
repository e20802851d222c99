import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One file of the built console, held in memory (a few tens of KB in all). */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * The console's built files (`npm run build` writes them to dist/console, beside
 * dist/apps/gateway): read once at start-up, so a request reads no file and no request path
 * can reach outside this set.
 */
export class ConsoleAssets {
  private readonly files = new Map<string, ConsoleAsset>();

  /** @param dir the built console; main.js sits in dist/apps/gateway, the console in dist/console */
  constructor(readonly dir: string = join(__dirname, '..', '..', 'console')) {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const contentType = CONTENT_TYPES[extname(name)];
      if (contentType === undefined) continue;
      this.files.set(name, { body: readFileSync(join(dir, name)), contentType });
    }
  }

  /** false when the console was not built (the gateway run from its sources). */
  get built(): boolean {
    return this.files.has('index.html');
  }

  /** The file with exactly this name, or undefined. */
  get(name: string): ConsoleAsset | undefined {
    return this.files.get(name);
  }
}
