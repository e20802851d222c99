import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const GATEWAY_ENTRY = join(REPO_ROOT, 'dist', 'apps', 'gateway', 'main.js');

/** Where the gateways that tests start keep Node's compile cache (shared by every run). */
const COMPILE_CACHE = join(tmpdir(), 'mcp-gateway-test-compile-cache');

/** A shared 32-byte session key so replicas in one test open each other's sessions. */
export const TEST_SESSION_KEYS = `t1:${randomBytes(32).toString('base64')}`;

export interface GatewayOptions {
  /** The `mcp:` tree; written to a temp file passed as MCP_CONFIG_FILE. */
  readonly mcp?: Record<string, unknown>;
  /** Extra env (APP_PROFILE, REDIS_URL, …); PORT and MANAGEMENT_PORT default to 0 (free ports). */
  readonly env?: Record<string, string | undefined>;
  /** Wait for readiness 200 before resolving (default false: wait for the listeners only). */
  readonly waitReady?: boolean;
  /**
   * Another copy of the built entry (default GATEWAY_ENTRY), e.g. one with a test worker
   * script beside it; its packages resolve through NODE_PATH=<repo>/node_modules.
   */
  readonly entry?: string;
}

/** A real gateway process (`node dist/apps/gateway/main.js`) started by a test. */
export class GatewayProcess {
  stdout = '';
  stderr = '';
  exitCode: number | null = null;
  mcpPort = 0;
  managementPort = 0;
  private readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    // 'close' (not 'exit'): it fires once stdout and stderr have been read to the end.
    this.exited = new Promise((resolveExit) =>
      child.on('close', (code) => {
        this.exitCode = code;
        resolveExit(code);
      }),
    );
  }

  get mcpUrl(): string {
    return `http://127.0.0.1:${this.mcpPort}/mcp`;
  }

  get managementUrl(): string {
    return `http://127.0.0.1:${this.managementPort}`;
  }

  /** stdout + stderr so far. */
  get output(): string {
    return this.stdout + this.stderr;
  }

  /** Spawns the gateway; does not wait for anything. */
  static spawn(options: GatewayOptions = {}): GatewayProcess {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      MANAGEMENT_PORT: '0',
      APP_PROFILE: 'local',
      NO_COLOR: '1',
      // A suite run starts about 480 gateways, and their boots are most of its CPU: Node's
      // on-disk cache of compiled modules takes about 7 % off each one after the first.
      NODE_COMPILE_CACHE: COMPILE_CACHE,
      // TEST_MCP_HTTP_SERVER=node runs a whole suite against the opt-in node:http listener
      ...(process.env.TEST_MCP_HTTP_SERVER === undefined
        ? {}
        : { MCP_HTTP_SERVER: process.env.TEST_MCP_HTTP_SERVER }),
    };
    if (options.mcp !== undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cfg-'));
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, stringify({ mcp: options.mcp }));
      env.MCP_CONFIG_FILE = file;
    }
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    if (options.entry !== undefined) env.NODE_PATH = join(REPO_ROOT, 'node_modules');
    const child = spawn(process.execPath, [options.entry ?? GATEWAY_ENTRY], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new GatewayProcess(child);
  }

  /** Spawns the gateway and waits until both listeners are up (and readiness, if asked). */
  static async start(options: GatewayOptions = {}): Promise<GatewayProcess> {
    const gateway = GatewayProcess.spawn(options);
    await gateway.waitForListening();
    if (options.waitReady) await gateway.waitForReady();
    return gateway;
  }

  /**
   * Spawns the gateway and waits generously (60 s each) for its listeners and readiness, as a
   * loaded CI starting several replicas needs; a gateway that never gets there is killed.
   */
  static async startPatiently(options: GatewayOptions): Promise<GatewayProcess> {
    const gateway = GatewayProcess.spawn(options);
    try {
      await gateway.waitForListening(60_000);
      await gateway.waitForReady(60_000);
    } catch (err) {
      await gateway.stop('SIGKILL');
      throw err;
    }
    return gateway;
  }

  async waitForListening(timeoutMs = 15_000): Promise<void> {
    await waitFor(
      () => {
        if (this.exitCode !== null)
          throw new Error(`gateway exited with ${this.exitCode}:\n${this.output}`);
        const match = /listening: mcp=(\d+) management=(\d+)/.exec(this.stdout);
        if (!match) return false;
        this.mcpPort = Number(match[1]);
        this.managementPort = Number(match[2]);
        return true;
      },
      timeoutMs,
      () => `gateway did not start listening:\n${this.output}`,
    );
  }

  /** Waits until the output (stdout + stderr) matches; log lines arrive a little after the HTTP answers. */
  async waitForOutput(pattern: string | RegExp, timeoutMs = 5000): Promise<void> {
    const matches = (): boolean =>
      typeof pattern === 'string' ? this.output.includes(pattern) : pattern.test(this.output);
    await waitFor(
      matches,
      timeoutMs,
      () => `output never matched ${String(pattern)}:\n${this.output}`,
    );
  }

  async readiness(): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.managementUrl}/actuator/health/readiness`);
    return { status: res.status, body: await res.json() };
  }

  async waitForReady(timeoutMs = 15_000): Promise<void> {
    await waitFor(
      async () => (await this.readiness()).status === 200,
      timeoutMs,
      () => `gateway not ready:\n${this.output}`,
    );
  }

  /** The gateway's resident memory in MB, as its metrics report it. */
  async residentMb(): Promise<number> {
    const text = await (await fetch(`${this.managementUrl}/actuator/prometheus`)).text();
    const match = /^mcp_gateway_process_resident_memory_bytes (\d+)/m.exec(text);
    if (match === null) throw new Error('no mcp_gateway_process_resident_memory_bytes');
    return Number(match[1]) / 1024 / 1024;
  }

  /** The value of one series in /actuator/prometheus (`name{labels}` as written there); 0 when absent. */
  async metricValue(series: string): Promise<number> {
    const text = await (await fetch(`${this.managementUrl}/actuator/prometheus`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  }

  /** GET /actuator/toolBundles. */
  async toolBundles(): Promise<any> {
    const res = await fetch(`${this.managementUrl}/actuator/toolBundles`);
    return res.json();
  }

  async bundleStatus(id: string): Promise<any> {
    const view = await this.toolBundles();
    return view.bundles.find((b: { id: string }) => b.id === id);
  }

  /** Resolves with the exit code (the process must exit on its own, e.g. a refused boot). */
  async waitForExit(timeoutMs = 15_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.exited,
        new Promise<number | null>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`gateway did not exit:\n${this.output}`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends a signal (default SIGTERM) and waits for the exit: by default longer than the
   * default 30 s grace period, so a drain that waits on a lingering connection on a loaded
   * machine ends the process instead of failing the suite's teardown.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 45_000): Promise<number | null> {
    if (this.exitCode !== null) return this.exitCode;
    this.child.kill(signal);
    try {
      return await this.waitForExit(timeoutMs);
    } catch (err) {
      this.child.kill('SIGKILL');
      throw err;
    }
  }
}

/** Polls `check` every 50 ms until it returns true; fails with `describe()` after timeoutMs. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  describe: () => string = () => 'condition not met',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
      if (err instanceof Error && err.message.startsWith('gateway exited')) throw err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${describe()}${lastError instanceof Error ? `\nlast error: ${lastError.message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
