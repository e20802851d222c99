// Starting and stopping the processes the bench measures: the bench Tool Service, the bare
// proxy and the built gateway, each optionally pinned to one core with taskset.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '..', '..');
export const GATEWAY_ENTRY = join(REPO_ROOT, 'dist', 'apps', 'gateway', 'main.js');
export const LOOP_MONITOR = join(here, 'loop-monitor.cjs');

const children = new Set();

let tempRoot;

/** A fresh directory under this bench process's temp root (removed by cleanupTemp). */
export function benchTempDir(prefix) {
  tempRoot ??= mkdtempSync(join(tmpdir(), 'mcpgw-bench-'));
  return mkdtempSync(join(tempRoot, `${prefix}-`));
}

let gatewayEntry = GATEWAY_ENTRY;

/**
 * Copies the built gateway (one webpack bundle; packages stay in node_modules) to a temp dir
 * and runs every gateway of this bench from that copy, so a `npm run build` started by
 * someone else mid-run cannot swap the code under the bench. The copy resolves its packages
 * through NODE_PATH=<repo>/node_modules and still runs with the repo root as cwd.
 * Returns what was snapshotted: path, sha256, mtime of dist/apps/gateway/main.js.
 */
export function snapshotGateway() {
  // Wait until the bundle is stable (not being rewritten by a build right now).
  for (let i = 0; i < 50; i++) {
    const age = Date.now() - statSync(GATEWAY_ENTRY).mtimeMs;
    if (age > 2000) break;
    spawnSync('sleep', ['0.2']);
  }
  const dir = benchTempDir('build');
  const copy = join(dir, 'main.js');
  copyFileSync(GATEWAY_ENTRY, copy);
  if (existsSync(`${GATEWAY_ENTRY}.map`)) copyFileSync(`${GATEWAY_ENTRY}.map`, `${copy}.map`);
  // The manifest validation worker is loaded from beside main.js.
  const worker = join(dirname(GATEWAY_ENTRY), 'manifest-worker.js');
  if (existsSync(worker)) copyFileSync(worker, join(dir, 'manifest-worker.js'));
  const check = spawnSync(process.execPath, ['--check', copy]);
  if (check.status !== 0)
    throw new Error(`the built gateway does not parse (a build in progress?): ${check.stderr}`);
  gatewayEntry = copy;
  const bytes = readFileSync(copy);
  return {
    entry: GATEWAY_ENTRY,
    runFrom: copy,
    sha256: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
    builtAt: new Date(statSync(GATEWAY_ENTRY).mtimeMs).toISOString(),
  };
}

/** Kills every child still running (by its own pid); for exits on error. */
export function killAll() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  cleanupTemp();
}

/**
 * Removes this bench process's temp root: children's log files (kept with BENCH_KEEP_LOGS=1),
 * gateway configs, the snapshot of the build, loop-monitor files.
 */
export function cleanupTemp() {
  if (tempRoot && process.env.BENCH_KEEP_LOGS !== '1') {
    rmSync(tempRoot, { recursive: true, force: true });
  }
}

export async function freePort() {
  // the kernel may hand the port just closed out again: two calls before either process binds
  // (a gateway's PORT and MANAGEMENT_PORT) once got the same one, and the gateway refused to start
  for (;;) {
    const port = await new Promise((res, rej) => {
      const srv = createServer();
      srv.on('error', rej);
      srv.listen(0, '127.0.0.1', () => {
        const { port } = srv.address();
        srv.close(() => res(port));
      });
    });
    if (handedOut.has(port)) continue;
    if (handedOut.size >= 4096) handedOut.clear();
    handedOut.add(port);
    return port;
  }
}

/** Ports freePort gave in this run: never given twice. */
const handedOut = new Set();

/**
 * The runtime settings the gateway is deployed with (the Helm chart's gateway.runtimeEnv and
 * `npm start` read the same file): every gateway of the bench runs with them, so its figures
 * are the production ones. BENCH_GATEWAY_ENV or a variant can override them; an empty value
 * unsets a variable.
 */
export const GATEWAY_RUNTIME_ENV = JSON.parse(
  readFileSync(join(REPO_ROOT, 'scripts', 'gateway-runtime-env.json'), 'utf8'),
);

/** BENCH_GATEWAY_ENV="LOG_LEVEL=warn FOO=bar": extra env for every gateway (e.g. to price logging). */
export function extraGatewayEnv() {
  const out = {};
  for (const pair of (process.env.BENCH_GATEWAY_ENV ?? '').split(/[\s,]+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i > 0) out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let logDir;
let logSeq = 0;

/** Reads at most `max` bytes of a file from `from` ('head') or its end ('tail'). */
function readPart(file, max, from) {
  let fd;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, max);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, from === 'head' ? 0 : size - length);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Spawns `node <args>` pinned to `core` (taskset execs node, so the pid is node's).
 * stdout and stderr go to a file, not a pipe: the gateway logs every call synchronously, and
 * a pipe would make its speed depend on how fast this process drains it. The file is removed
 * when the process is stopped (BENCH_KEEP_LOGS=1 keeps it).
 */
export function spawnNode(nodeArgs, { core, env, cwd }) {
  logDir ??= benchTempDir('logs');
  const logFile = join(logDir, `${++logSeq}.log`);
  const fd = openSync(logFile, 'w');
  const argv = [process.execPath, ...nodeArgs];
  const stdio = ['ignore', fd, fd];
  const child =
    core === undefined
      ? spawn(argv[0], argv.slice(1), { env, cwd, stdio })
      : spawn('taskset', ['-c', String(core), ...argv], { env, cwd, stdio });
  closeSync(fd);
  children.add(child);
  const output = () => readPart(logFile, 32_000, 'tail');
  // When the "listening" line shows up (startup only; polled every 5 ms).
  const marks = {};
  const watcher = setInterval(() => {
    if (/listening/.test(readPart(logFile, 256_000, 'head'))) {
      marks.listeningAt = performance.now();
      clearInterval(watcher);
    }
  }, 5);
  const exited = new Promise((r) =>
    child.on('exit', (code, signal) => {
      clearInterval(watcher);
      children.delete(child);
      r(code ?? signal);
    }),
  );
  return {
    child,
    pid: child.pid,
    exited,
    logFile,
    output,
    marks,
    async stop(timeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        const started = performance.now();
        child.kill('SIGTERM');
        let timer;
        const done = await Promise.race([
          exited.then(() => true),
          new Promise((r) => (timer = setTimeout(() => r(false), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (!done) {
          process.stderr.write(
            `[bench] pid ${child.pid} ignored SIGTERM for ${timeoutMs} ms: SIGKILL\n`,
          );
          child.kill('SIGKILL');
          await exited;
        } else if (performance.now() - started > 2000) {
          process.stderr.write(
            `[bench] pid ${child.pid} took ${(performance.now() - started).toFixed(0)} ms to stop\n`,
          );
        }
      }
      if (process.env.BENCH_KEEP_LOGS !== '1') rmSync(logFile, { force: true });
    },
  };
}

async function waitForLine(proc, regex, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = regex.exec(proc.output());
    if (m) return m;
    if (proc.child.exitCode !== null) throw new Error(`${what} exited:\n${proc.output()}`);
    if (Date.now() > deadline) throw new Error(`${what} did not start:\n${proc.output()}`);
    await sleep(10);
  }
}

export async function startToolService({ core } = {}) {
  const proc = spawnNode([join(here, 'tool-service.mjs')], {
    core,
    env: { PATH: process.env.PATH, PORT: '0' },
  });
  const m = await waitForLine(proc, /listening (\d+)/, 10_000, 'tool service');
  const port = Number(m[1]);
  return {
    ...proc,
    port,
    url: `http://127.0.0.1:${port}`,
    /** (Re)builds catalog `key` with `tools` tools; returns the manifest size in bytes. */
    async setCatalog(key, tools, revision, variant) {
      const res = await fetch(`http://127.0.0.1:${port}/__bench/catalog`, {
        method: 'POST',
        body: JSON.stringify({ key, tools, revision, variant }),
      });
      return (await res.json()).bytes;
    },
  };
}

export async function startBareProxy({ core, upstream, nodeArgs = [] }) {
  const proc = spawnNode([...nodeArgs, join(here, 'bare-proxy.mjs')], {
    core,
    env: { PATH: process.env.PATH, PORT: '0', UPSTREAM: upstream },
  });
  const m = await waitForLine(proc, /listening (\d+)/, 10_000, 'bare proxy');
  return { ...proc, port: Number(m[1]) };
}

/**
 * The upstreamCall scenario's MCP server (bench/lib/mcp-upstream.mjs: v1 SDK, stateful
 * sessions, SSE answers unless `json`; `answerBytes` more bytes in every echo answer). `url` is
 * its MCP endpoint.
 */
export async function startMcpUpstream({ core, json = false, answerBytes = 0 }) {
  const proc = spawnNode([join(here, 'mcp-upstream.mjs')], {
    core,
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      UPSTREAM_JSON: json ? '1' : '0',
      UPSTREAM_ANSWER_BYTES: String(answerBytes),
    },
  });
  const m = await waitForLine(proc, /listening (\d+) (\w+)/, 20_000, 'MCP upstream');
  const port = Number(m[1]);
  return { ...proc, port, answers: m[2], url: `http://127.0.0.1:${port}/mcp` };
}

/**
 * The fanout scenario's upstreams (bench/lib/mcp-fanout.mjs): `servers` v2 SDK servers with
 * `tools` tools each and `silent` listeners that never answer, in one process.
 */
/**
 * One replaying upstream (bench/lib/mcp-replay.mjs): the answers of v2 SDK server `server`
 * with `tools` tools, recorded at start and replayed; same shape as startFanoutUpstreams.
 */
export async function startReplayUpstream({ core, server, tools }) {
  const proc = spawnNode([join(here, 'mcp-replay.mjs')], {
    core,
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, REPLAY_SERVER: String(server), REPLAY_TOOLS: String(tools) },
  });
  const m = await waitForLine(proc, /listening (\{.*\})/, 30_000, 'replay upstream');
  const ports = JSON.parse(m[1]);
  const url = (port) => `http://127.0.0.1:${port}/mcp`;
  return { ...proc, servers: ports.servers.map(url), silent: [] };
}

export async function startFanoutUpstreams({ core, servers, tools, silent }) {
  const proc = spawnNode([join(here, 'mcp-fanout.mjs')], {
    core,
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      FANOUT_SERVERS: String(servers),
      FANOUT_TOOLS: String(tools),
      FANOUT_SILENT: String(silent),
    },
  });
  const m = await waitForLine(proc, /listening (\{.*\})/, 30_000, 'fan-out upstreams');
  const ports = JSON.parse(m[1]);
  const url = (port) => `http://127.0.0.1:${port}/mcp`;
  return { ...proc, servers: ports.servers.map(url), silent: ports.silent.map(url) };
}

/**
 * What a bench gateway starts with: writes `mcp` as the YAML config `file`, picks free ports
 * and returns them with the child's env (the runtime env it is deployed with, BENCH_GATEWAY_ENV,
 * then `env`; an empty value unsets a variable).
 */
export async function gatewayLaunch(mcp, file, env = {}) {
  writeFileSync(file, stringify({ mcp }));
  const port = await freePort();
  const managementPort = await freePort();
  const childEnv = {
    PATH: process.env.PATH,
    NODE_PATH: join(REPO_ROOT, 'node_modules'),
    HOST: '127.0.0.1',
    PORT: String(port),
    MANAGEMENT_PORT: String(managementPort),
    APP_PROFILE: 'local',
    MCP_CONFIG_FILE: file,
    NO_COLOR: '1',
    ...GATEWAY_RUNTIME_ENV,
    ...extraGatewayEnv(),
    ...env,
  };
  for (const [key, value] of Object.entries(childEnv)) if (value === '') delete childEnv[key];
  return { port, managementPort, env: childEnv };
}

/**
 * Spawns the built gateway with one bundle (the bench Tool Service, catalog `catalog`) on
 * fixed free ports, so readiness can be polled from the moment of spawn. Does not wait.
 * `mcp` replaces the whole `mcp:` config (e.g. upstreams instead of the bundle); `mcpExtra`
 * adds top-level keys to the default one (e.g. `http: {modernEra: true}`).
 */
export async function spawnGateway({
  core,
  toolService,
  catalog,
  mcp: mcpConfig,
  nodeArgs = [],
  env = {},
  refreshIntervalSeconds = 3600,
  mcpExtra = {},
}) {
  const file = join(benchTempDir('config'), 'gateway.yaml');
  const mcp = mcpConfig ?? {
    identity: 'bench',
    registry: { refreshIntervalSeconds, refreshJitterSeconds: 0 },
    discovery: {
      enabled: true,
      connectTimeoutMillis: 1000,
      readTimeoutMillis: 3000,
      maxToolsPerBundle: 10000,
      maxToolsTotal: 10000,
      maxManifestBytes: 33554432,
      maxToolTimeoutMillis: 30000,
    },
    bundles: [
      {
        id: 'bench',
        manifestUrl: `${toolService.url}/tool-manifest?catalog=${catalog}`,
        baseEndpoint: `${toolService.url}/mcp`,
        namePrefix: 'bench.',
        enabled: true,
      },
    ],
    ...mcpExtra,
  };
  const { port, managementPort, env: childEnv } = await gatewayLaunch(mcp, file, env);
  const spawnedAt = performance.now();
  const proc = spawnNode([...nodeArgs, gatewayEntry], { core, cwd: REPO_ROOT, env: childEnv });
  return {
    ...proc,
    spawnedAt,
    port,
    managementPort,
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    managementUrl: `http://127.0.0.1:${managementPort}`,
  };
}

/** Polls GET readiness every 5 ms until 200; returns ms since spawn. */
export async function waitReady(gw, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${gw.managementUrl}/actuator/health/readiness`);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - gw.spawnedAt;
    } catch {
      // not listening yet
    }
    if (gw.child.exitCode !== null) throw new Error(`gateway exited:\n${gw.output()}`);
    if (Date.now() > deadline)
      throw new Error(`gateway not ready in ${timeoutMs} ms:\n${gw.output()}`);
    await sleep(5);
  }
}

/** One JSON-RPC request to /mcp; returns {status, json, text, ms}. */
export async function rpc(gw, id, method, params) {
  const started = performance.now();
  const res = await fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(
      params === undefined
        ? { jsonrpc: '2.0', id, method }
        : { jsonrpc: '2.0', id, method, params },
    ),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, ms };
}

/** Polls tools/list every 5 ms until it answers with a result; returns ms since spawn. */
export async function waitFirstToolsList(gw, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (let id = 1; ; id++) {
    try {
      const r = await rpc(gw, id, 'tools/list');
      if (r.status === 200 && r.json?.result?.tools) return performance.now() - gw.spawnedAt;
    } catch {
      // not listening yet
    }
    if (gw.child.exitCode !== null) throw new Error(`gateway exited:\n${gw.output()}`);
    if (Date.now() > deadline)
      throw new Error(`no tools/list answer in ${timeoutMs} ms:\n${gw.output()}`);
    await sleep(5);
  }
}

export async function toolBundles(gw) {
  const res = await fetch(`${gw.managementUrl}/actuator/toolBundles`);
  return res.json();
}

/** The JavaScript heap's figures in the loop monitor's live file (MB), or undefined before it is written. */
export function loopHeap(loopFile) {
  try {
    const live = JSON.parse(readFileSync(loopFile, 'utf8'));
    return {
      heapUsedMb: live.heapUsedMb,
      heapTotalMb: live.heapTotalMb,
      externalMb: live.externalMb,
    };
  } catch {
    return undefined;
  }
}
