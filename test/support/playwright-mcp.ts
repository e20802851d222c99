import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM } from './browser';
import { REPO_ROOT, waitFor } from './gateway-process';
import { listenLocal, stopper } from './local-http';

/** `@playwright/mcp`'s command line (its `playwright-mcp` bin). */
const CLI = join(REPO_ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js');

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * The official `@playwright/mcp` server as a real upstream MCP server (README "Recipe: a
 * browser for your agents"): Streamable HTTP on 127.0.0.1 (`--port`), Debian's Chromium through
 * `--executable-path`, headless, without Chromium's sandbox (it runs as root here), an in-memory
 * profile (`--isolated`). `--allowed-hosts` names the address the gateway connects to: the server
 * otherwise answers 403 to any Host but `localhost:<port>`.
 */
export class PlaywrightMcpServer {
  output = '';
  exitCode: number | null = null;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly outputDir: string,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    this.exited = new Promise((resolveExit) =>
      child.on('close', (code) => {
        this.exitCode = code;
        resolveExit();
      }),
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  static async start(): Promise<PlaywrightMcpServer> {
    const port = await freePort();
    const outputDir = mkdtempSync(join(tmpdir(), 'playwright-mcp-'));
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--allowed-hosts',
        `127.0.0.1:${port}`,
        '--browser',
        'chromium',
        '--executable-path',
        CHROMIUM,
        '--headless',
        '--no-sandbox',
        '--isolated',
        '--output-dir',
        outputDir,
      ],
      {
        cwd: outputDir,
        env: { PATH: process.env.PATH ?? '', HOME: outputDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const server = new PlaywrightMcpServer(child, port, outputDir);
    try {
      await waitFor(
        () => server.exitCode !== null || server.output.includes('Listening on'),
        20_000,
        () => `@playwright/mcp did not start:\n${server.output}`,
      );
      if (server.exitCode !== null)
        throw new Error(`@playwright/mcp exited with ${server.exitCode}:\n${server.output}`);
      return server;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    if (this.exitCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.outputDir, { recursive: true, force: true });
  }
}

/**
 * A page on 127.0.0.1 with one button: a click shows "Pressed N" on the page and tells the server
 * (`POST /pressed`), so a test sees the click both in the browser's snapshot and here.
 */
export class ButtonPage {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly counter: { presses: number },
  ) {}

  /** How many clicks the page's script has reported. */
  get pressed(): number {
    return this.counter.presses;
  }

  static async start(): Promise<ButtonPage> {
    const counter = { presses: 0 };
    const server = createHttpServer((req, res) => {
      if (req.method === 'POST' && req.url === '/pressed') {
        counter.presses++;
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
        return;
      }
      res.writeHead(404).end();
    });
    // listenLocal names the server's /mcp URL; the page is its root
    const base = await listenLocal(server);
    return new ButtonPage(server, base.replace(/\/mcp$/, '/'), counter);
  }

  stop(): Promise<void> {
    return stopper(this.server)();
  }
}

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Gateway button page</title></head>
<body>
<h1>Gateway button page</h1>
<button id="press" type="button">Press me</button>
<p id="status">Not pressed</p>
<script>
let pressed = 0;
document.getElementById('press').addEventListener('click', () => {
  pressed++;
  document.getElementById('status').textContent = 'Pressed ' + pressed;
  fetch('/pressed', { method: 'POST' });
});
</script>
</body>
</html>
`;
