import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, waitFor } from './gateway-process';

/** server-everything's entry point; `streamableHttp` as its argument serves POST/GET /mcp. */
const ENTRY = join(
  REPO_ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);

/** A port free right now (server-everything prints the PORT it was given, not the bound one). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    // No host: server-everything (express) binds every interface, so the probe does too.
    probe.listen(0, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * The official `@modelcontextprotocol/server-everything` as a real upstream MCP server, in its
 * Streamable HTTP mode (stateful sessions, SSE answers, an event store), on 127.0.0.1.
 */
export class EverythingServer {
  output = '';
  exitCode: number | null = null;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
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

  /** Starts it on a free port; tries again on another port if that one was taken meanwhile. */
  static async start(): Promise<EverythingServer> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const child = spawn(process.execPath, [ENTRY, 'streamableHttp'], {
        cwd: REPO_ROOT,
        // Only PATH and PORT: its get-env tool returns its whole environment.
        env: { PATH: process.env.PATH ?? '', PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const server = new EverythingServer(child, port);
      try {
        await waitFor(
          () => server.exitCode !== null || server.output.includes(`listening on port ${port}`),
          15_000,
          () => `server-everything did not start:\n${server.output}`,
        );
        if (server.exitCode === null) return server;
        lastError = new Error(
          `server-everything exited with ${server.exitCode}:\n${server.output}`,
        );
        // Another process took the port between the probe and the listen: another port.
        if (!server.output.includes('already in use')) throw lastError;
      } catch (err) {
        await server.stop();
        throw err;
      }
    }
    throw lastError;
  }

  async stop(): Promise<void> {
    if (this.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}
