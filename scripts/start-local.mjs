#!/usr/bin/env node
// `npm start`: checks that the ports are free, builds both apps, then runs the sample Tool
// Service on 127.0.0.1:$SAMPLE_PORT (8081), the sample upstream MCP server
// (scripts/sample-mcp-server.mjs) on 127.0.0.1:$SAMPLE_MCP_PORT (8082), and the gateway (local profile) on
// 127.0.0.1:$PORT (8080, /mcp) and 127.0.0.1:$MANAGEMENT_PORT (9090, /actuator), with the
// runtime settings the chart deploys (scripts/gateway-runtime-env.json). The local profile
// reads SAMPLE_PORT and SAMPLE_MCP_PORT too (config/application-local.yaml), so they always agree.
// Ctrl-C stops both.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const USAGE = `npm start [-- --no-build]   (node scripts/start-local.mjs [--no-build])

Builds both apps (skipped with --no-build), then runs the sample Tool Service, the sample
upstream MCP server and the gateway (local profile); Ctrl-C stops all three.

Environment (defaults):
  PORT              8080   the gateway's /mcp listener
  MANAGEMENT_PORT   9090   the gateway's management port (/actuator, /admin, /console)
  SAMPLE_PORT       8081   the sample Tool Service
  SAMPLE_MCP_PORT   8082   the sample upstream MCP server
  HOST              127.0.0.1
  MCP_ADMIN_TOKEN          enables /admin writes (runtime registrations) and the console's changes
  MCP_CONFIG_FILE          a configuration file of your own (README "Configuration")

The gateway's own options and variables: node dist/apps/gateway/main.js --help`;

// only the options this script knows: `--help`, or a typo, must not start three processes
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const unknown = args.filter((a) => a !== '--no-build');
if (unknown.length > 0) {
  console.error(`[start] unknown option ${unknown.join(' ')}; see --help`);
  process.exit(2);
}

const host = process.env.HOST ?? '127.0.0.1';
const ports = [
  { name: 'SAMPLE_PORT', what: 'the sample Tool Service', port: process.env.SAMPLE_PORT || '8081' },
  {
    name: 'SAMPLE_MCP_PORT',
    what: 'the sample upstream MCP server',
    port: process.env.SAMPLE_MCP_PORT || '8082',
  },
  { name: 'PORT', what: 'the gateway /mcp listener', port: process.env.PORT || '8080' },
  {
    name: 'MANAGEMENT_PORT',
    what: 'the gateway /actuator listener',
    port: process.env.MANAGEMENT_PORT || '9090',
  },
];

/** Resolves with the error code when the port cannot be bound on `host`, or null when it is free. */
function probe(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err) => resolve(err.code ?? 'error'));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

const problems = [];
const seen = new Map();
for (const p of ports) {
  const n = Number(p.port);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    problems.push(`${p.name}=${p.port} is not a port number (1-65535)`);
    continue;
  }
  if (seen.has(n)) {
    problems.push(`${p.name} and ${seen.get(n)} are both ${n}`);
    continue;
  }
  seen.set(n, p.name);
  const code = await probe(n);
  if (code === 'EADDRINUSE')
    problems.push(
      `port ${n} (${p.name}, ${p.what}) is in use on ${host}: stop what holds it or set ${p.name}`,
    );
  else if (code !== null)
    problems.push(`port ${n} (${p.name}, ${p.what}) cannot be used on ${host} (${code})`);
}
if (problems.length > 0) {
  console.error(`[start] not starting:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}

// `npm start -- --no-build`: start what dist/ holds (a build already made)
const build = process.argv.includes('--no-build')
  ? { status: 0 }
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) {
  console.error('[start] the build failed; see above');
  process.exit(build.status ?? 1);
}

const [sample, sampleMcp, gatewayPort, managementPort] = ports.map((p) => p.port);
const children = [];
let stopping = false;

function run(name, entry, env, { pipeStdout = false } = {}) {
  // an IPC channel each child watches: when this process dies, even by SIGKILL, the channel
  // closes and the child stops (apps/gateway/src/main.ts, apps/sample-tool-service/src/main.ts,
  // scripts/sample-mcp-server.mjs), so no process is left holding its port
  const child = spawn(process.execPath, [entry], {
    stdio: pipeStdout
      ? ['inherit', 'pipe', 'inherit', 'ipc']
      : ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  if (pipeStdout) child.stdout.pipe(process.stdout);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${name} exited (${signal ?? code}); stopping`);
      stop(code ?? 1);
    }
  });
  children.push(child);
  return child;
}

function stop(code = 0) {
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(
    children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))),
  ).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
// the terminal closed
process.on('SIGHUP', () => stop(0));
// what reads this process's output went away (a closed pipe: `npm start | head`): as when the
// terminal closes, everything stops (an unhandled EPIPE would end this process alone)
for (const stream of [process.stdout, process.stderr])
  stream.on('error', () => {
    if (!stopping) stop(0);
  });
// `npm start` killed outright (SIGKILL or SIGHUP of npm): this process is handed to another
// parent, or, where npm ran it through a shell that did not exec it (the script says `exec`;
// run another way, dash's `sh -c` may not), that shell lives on as its parent while npm is
// gone; stop in either case. Only a shell parent's parent is watched: npm's own parent (the
// terminal, a script that started npm in the background and went on) is none of ours.
const parent = process.ppid;
const npmProcess =
  process.env.npm_lifecycle_event === undefined || !isShell(parent) ? undefined : parentOf(parent);
setInterval(() => {
  if (stopping) return;
  if (process.ppid !== parent || (npmProcess !== undefined && !alive(npmProcess))) stop(0);
}, 500).unref();

/** Whether process `pid` is a POSIX shell (Linux: /proc/<pid>/comm). */
function isShell(pid) {
  try {
    return ['sh', 'dash', 'bash', 'ash', 'zsh'].includes(
      readFileSync(`/proc/${pid}/comm`, 'utf8').trim(),
    );
  } catch {
    return false;
  }
}

/** The parent of process `pid` (Linux: /proc/<pid>/stat); undefined where it cannot be read. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: fields after its `)`
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

run('sample-tool-service', 'dist/apps/sample-tool-service/main.js', { PORT: sample, HOST: host });
run('sample-mcp-server', 'scripts/sample-mcp-server.mjs', { PORT: sampleMcp, HOST: host });

// Start the gateway once the sample manifest and the sample MCP server answer, so its first
// pull succeeds (otherwise it would serve the local fallback file, and no upstream tools,
// until the next refresh).
const deadline = Date.now() + 15_000;
for (const url of [`http://${host}:${sample}/tool-manifest`, `http://${host}:${sampleMcp}/mcp`]) {
  for (;;) {
    try {
      // any HTTP answer means the listener is up (the MCP endpoint answers GET with 4xx)
      const res = await fetch(url);
      if (res.ok || url.endsWith('/mcp')) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || stopping) break;
    await sleep(100);
  }
}
// The runtime memory settings the chart deploys and the bench measures
// (scripts/gateway-runtime-env.json; docs/benchmarks.md); a variable already set wins.
const runtimeEnv = JSON.parse(
  readFileSync(new URL('./gateway-runtime-env.json', import.meta.url), 'utf8'),
);
for (const name of Object.keys(runtimeEnv)) {
  if (process.env[name] !== undefined) delete runtimeEnv[name];
}

if (!stopping) {
  const gateway = run(
    'gateway',
    'dist/apps/gateway/main.js',
    {
      ...runtimeEnv,
      APP_PROFILE: process.env.APP_PROFILE ?? 'local',
      HOST: host,
      PORT: gatewayPort,
      MANAGEMENT_PORT: managementPort,
      SAMPLE_PORT: sample,
      SAMPLE_MCP_PORT: sampleMcp,
    },
    { pipeStdout: true },
  );
  // The console URL comes last in the start-up output (docs/console.md): printed once the gateway
  // listens and its first catalog is ready (or after 15 s).
  let seen = '';
  const announce = (chunk) => {
    seen = (seen + chunk.toString('utf8')).slice(-4096);
    if (!/listening: mcp=\d+ management=\d+/.test(seen)) return;
    gateway.stdout.off('data', announce);
    void printConsoleUrl();
  };
  gateway.stdout.on('data', announce);
}

async function printConsoleUrl() {
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const management = `http://${displayHost}:${managementPort}`;
  const until = Date.now() + 15_000;
  while (Date.now() < until && !stopping) {
    try {
      if ((await fetch(`${management}/actuator/health/readiness`)).ok) break;
    } catch {
      // not up yet
    }
    await sleep(200);
  }
  if (stopping) return;
  console.log(
    `\n[start] console: ${management}/console\n` +
      `[start] MCP endpoint: http://${displayHost}:${gatewayPort}/mcp\n`,
  );
}
