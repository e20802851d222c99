#!/usr/bin/env node
// `npm run bench:instructions`: machine instructions per tools/call, counted by callgrind.
//
// CPU time per call on this machine swings up to 2x between runs seconds apart; instruction
// counts do not. This script runs the built gateway under `valgrind --tool=callgrind` with
// collection off, sends a warm-up of tools/call requests (16 at a time, from this process),
// lets 3 s settle, switches collection on with callgrind_control, counts a 5 s idle window,
// sends the measured requests, dumps the counts, lets 3 s settle (dumped, not read), counts
// an idle window (BENCH_INSTR_IDLE_MS, 10 s; the lower rate of the two windows is used),
// stops the gateway, and prints instructions per call: in all, in V8's compilers and parsers
// (code still being optimized during the window, which varies from run to run;
// bench/lib/instructions-gate.mjs, COMPILE_FUNCTION), the process's per-second work (timers:
// the idle window's rate times the calls' duration, which grows with the machine's load since
// valgrind runs the process about 50 times slower) and the rest (the steady state: compare
// this one). The same build repeats to about 2 %. Kernel time (syscalls) is not counted. Use it
// to compare two builds; the targets (docs/benchmarks.md "Targets") are CPU-time ratios from
// `npm run bench`.
//
// BENCH_INSTR_MODE: modern (default; a 2026-07-28 client, mcp.http.modernEra on), legacy
// (a 2025 client), upstream (a 2025 client calling an upstream MCP server's tool, the
// upstreamCall scenario's v1 SDK server), proxy (the bare proxy, bench/lib/bare-proxy.mjs, in
// front of the bench Tool Service, sent what wrk sends it in toolsCall and modern: POST
// /mcp/bench.echo {"nonce":N}; the floor the CPU ratios divide by). BENCH_INSTR_CALLS (4000) measured after
// BENCH_INSTR_WARMUP (10000); BENCH_INSTR_RUNS (1) repeats the whole measurement.
// BENCH_INSTR_NODE_FLAGS sets the measured process's V8 flags (bench/lib/instructions-gate.mjs,
// instructionNodeFlags).
// BENCH_INSTR_PERF_MAP=1 adds --perf-basic-prof (JIT names in /tmp/perf-<pid>.map, for
// matching callgrind's addresses) and keeps the callgrind file. BENCH_INSTR_JSON=<file> also
// writes the figures there as JSON (what `npm run bench:gate` reads). Needs valgrind.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { annotatedFrame, instructionNodeFlags } from './lib/instructions-gate.mjs';
import { AUDIENCE, startIssuer } from './lib/scenario-auth.mjs';
import { haveCommand } from './lib/load.mjs';
import { tracingSink } from './lib/tracing-sink.mjs';
import {
  REPO_ROOT,
  benchTempDir,
  cleanupTemp,
  freePort,
  gatewayLaunch,
  snapshotGateway,
  startMcpUpstream,
  startToolService,
} from './lib/processes.mjs';

const MODE = process.env.BENCH_INSTR_MODE ?? 'modern';
if (!['modern', 'legacy', 'upstream', 'proxy'].includes(MODE))
  throw new Error(`BENCH_INSTR_MODE: unknown mode ${MODE}`);
const CALLS = Number(process.env.BENCH_INSTR_CALLS) || 4000;
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP) || 10_000;
const RUNS = Number(process.env.BENCH_INSTR_RUNS) || 1;
const PERF_MAP = process.env.BENCH_INSTR_PERF_MAP === '1';
const JSON_OUT = process.env.BENCH_INSTR_JSON;
const CONCURRENCY = 16;
/** The idle window after the calls, in which the process's per-second work is counted. */
const IDLE_MS = Number(process.env.BENCH_INSTR_IDLE_MS) || 10_000;
/** Between the calls and the idle window, and before the window ahead of them: not counted. */
const SETTLE_MS = 3000;
/** The idle window ahead of the calls (after the warm-up and a settling part). */
const IDLE_BEFORE_MS = 5000;
const NODE_FLAGS = instructionNodeFlags(process.env);
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench-instructions', version: '1' },
};

for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate'])
  if (!haveCommand(tool)) throw new Error(`${tool} is missing (apt-get install -y valgrind)`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * BENCH_INSTR_TRACING_RATIO=<0..1>: the gateway traces (mcp.tracing) with this sampling ratio,
 * exporting to an OTLP/HTTP sink in this process that takes every export and drops it
 * (docs/benchmarks.md, "Traces"). Unset: no tracing, as deployed by default.
 */
const TRACING_RATIO = process.env.BENCH_INSTR_TRACING_RATIO;
const sink = tracingSink();

/**
 * BENCH_INSTR_AUTH=1: the gateway verifies a JWT on every call (mcp.auth.mode jwt, the `auth`
 * scenario's local ES256 issuer and token), to count what authentication adds to a call of the
 * mode (not `proxy`). Unset: no auth, as the gate measures.
 */
const AUTH = process.env.BENCH_INSTR_AUTH === '1';
if (AUTH && MODE === 'proxy') throw new Error('BENCH_INSTR_AUTH: the bare proxy has no auth');
const issuer = AUTH ? await startIssuer() : undefined;

/**
 * callgrind_control finds the process by a file named after USER and HOST as each process sees
 * them; the gateway's env sets HOST (its bind address) and no USER, so the control commands
 * get the same.
 */
function control(pid, ...args) {
  const { USER: _user, LOGNAME: _logname, ...env } = process.env;
  execFileSync('callgrind_control', [...args, String(pid)], {
    stdio: 'ignore',
    env: { ...env, HOST: '127.0.0.1' },
  });
}

/** Sums callgrind_annotate's self counts: [all, compile]. */
function totals(file) {
  const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  let all = 0;
  let compile = 0;
  let majorGc = 0;
  for (const line of out.split('\n')) {
    const frame = annotatedFrame(line);
    if (frame === undefined) continue;
    all += frame.count;
    if (frame.compile) compile += frame.count;
    else if (frame.majorGc) majorGc += frame.count;
  }
  return [all, compile, majorGc];
}

/**
 * BENCH_INSTR_VALIDATE_ARGUMENTS=0|1: the bench source's `validateArguments` (docs/operations.md
 * §6 "Argument validation"), to measure what the check costs. Unset: as deployed (a bundle's
 * calls checked, an upstream's not).
 */
const VALIDATE_ARGUMENTS = process.env.BENCH_INSTR_VALIDATE_ARGUMENTS;
const validateArguments =
  VALIDATE_ARGUMENTS === undefined || VALIDATE_ARGUMENTS === ''
    ? {}
    : { validateArguments: VALIDATE_ARGUMENTS === '1' };

/** The gateway's config and env for this mode; its /mcp and readiness URLs. */
async function gatewayTarget(source, dir) {
  const registry = { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 };
  const mcp =
    MODE === 'upstream'
      ? {
          identity: 'bench',
          registry,
          discovery: { enabled: true },
          upstreams: [{ id: 'up', url: source.url, ...validateArguments }],
        }
      : {
          identity: 'bench',
          registry,
          discovery: { enabled: true },
          bundles: [
            {
              id: 'bench',
              manifestUrl: `${source.url}/tool-manifest?catalog=instructions`,
              baseEndpoint: `${source.url}/mcp`,
              namePrefix: 'bench.',
              ...validateArguments,
            },
          ],
          ...(MODE === 'modern' ? { http: { modernEra: true } } : {}),
        };
  if (issuer !== undefined)
    mcp.auth = { mode: 'jwt', issuer: issuer.issuer, audience: AUDIENCE, jwksUrl: issuer.jwksUrl };
  if (TRACING_RATIO !== undefined && TRACING_RATIO !== '')
    mcp.tracing = { endpoint: await sink.endpoint(), samplingRatio: Number(TRACING_RATIO) };
  const { port, managementPort, env } = await gatewayLaunch(mcp, join(dir, 'gateway.yaml'));
  return {
    script: build.runFrom,
    env,
    port,
    ready: `http://127.0.0.1:${managementPort}/actuator/health/readiness`,
  };
}

/** The bare proxy in front of the Tool Service; ready when a call through it answers. */
async function proxyTarget(source) {
  const port = await freePort();
  return {
    script: join(REPO_ROOT, 'bench', 'lib', 'bare-proxy.mjs'),
    env: { PATH: process.env.PATH, UPSTREAM: source.url, PORT: String(port), HOST: '127.0.0.1' },
    port,
    ready: undefined,
  };
}

/** One POST of this mode: [path, headers, body]. */
function request(id) {
  if (MODE === 'proxy')
    return ['/mcp/bench.echo', { 'content-type': 'application/json' }, `{"nonce":${id}}`];
  const tool = MODE === 'upstream' ? 'up__echo' : 'bench.echo';
  const modern = MODE === 'modern';
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(issuer === undefined ? {} : { authorization: `Bearer ${issuer.token}` }),
    ...(modern
      ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool }
      : {}),
  };
  const params = { name: tool, arguments: { nonce: id }, ...(modern ? { _meta: ENVELOPE } : {}) };
  return ['/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })];
}

/**
 * A port picked ahead (freePort) was taken before the process under valgrind bound it: valgrind
 * takes seconds to start it, and meanwhile any outgoing connection on this machine (a parallel
 * mode of bench:gate among them) may get that port as its own.
 */
class PortTaken extends Error {}

/** measureOnce, on fresh ports when the ones picked were taken in the meantime (at most 3 times). */
async function measure(source) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await measureOnce(source);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 3) throw err;
      process.stderr.write(`${err.message}; measuring again on other ports\n`);
    }
  }
}

async function measureOnce(source) {
  const dir = benchTempDir('instructions');
  const target = MODE === 'proxy' ? await proxyTarget(source) : await gatewayTarget(source, dir);
  const out = join(dir, 'callgrind.out');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...NODE_FLAGS,
      ...(PERF_MAP ? ['--perf-basic-prof'] : []),
      target.script,
    ],
    { env: target.env, cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.on('exit', r));
  const pool = new Pool(`http://127.0.0.1:${target.port}`, { connections: CONCURRENCY });
  let next = 1;
  const send = async (last) => {
    while (next <= last) {
      const id = next++;
      const [path, headers, body] = request(id);
      const res = await pool.request({ path, method: 'POST', headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 200 || /nonce\\?":(\d+)/.exec(text)?.[1] !== String(id))
        throw new Error(`call ${id}: ${res.statusCode} ${text.slice(0, 500)}`);
    }
  };
  try {
    for (let waited = 0; ; waited += 250) {
      try {
        const [path, headers, body] = request(0);
        const res =
          target.ready === undefined
            ? await fetch(`http://127.0.0.1:${target.port}${path}`, {
                method: 'POST',
                headers,
                body,
              })
            : await fetch(target.ready);
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null && /EADDRINUSE/.test(stderr))
        throw new PortTaken(`${target.script}: its port was taken before it bound it`);
      if (child.exitCode !== null || waited > 300_000)
        throw new Error(`${target.script} did not become ready under valgrind:\n${stderr}`);
      await sleep(250);
    }
    const run = (last) => Promise.all(Array.from({ length: CONCURRENCY }, () => send(last)));
    try {
      await run(WARMUP);
    } catch (err) {
      // readiness answered, then the calls' port refused them: the process under valgrind
      // died (its stderr says why), or another process held the port picked ahead (PortTaken:
      // measured again on other ports, as when it could not bind it)
      if (child.exitCode !== null)
        throw new Error(`${target.script} exited during the warm-up:\n${stderr}`, { cause: err });
      if (err?.code === 'ECONNREFUSED' || err?.cause?.code === 'ECONNREFUSED')
        throw new PortTaken(
          `${target.script}: port ${target.port} refused the calls after readiness`,
        );
      throw err;
    }
    // The per-second work is counted in a quiet window before the calls as well as after them,
    // and the lower rate is subtracted: work that is not per-second (a full GC, deferred work
    // of the warm-up or of the calls) lands in one window now and then, hardly in both.
    await sleep(SETTLE_MS);
    control(child.pid, '-i', 'on');
    const beforeFrom = performance.now();
    await sleep(IDLE_BEFORE_MS);
    control(child.pid, '--dump=before');
    const beforeMs = performance.now() - beforeFrom;
    const callsFrom = performance.now();
    await run(WARMUP + CALLS);
    const callsMs = performance.now() - callsFrom;
    control(child.pid, '--dump=calls');
    // what the calls left behind (a GC of their garbage, work they deferred a moment) falls in
    // a settling part that is dumped and not read, not in the idle rate that is subtracted
    await sleep(SETTLE_MS);
    control(child.pid, '--dump=settle');
    const idleFrom = performance.now();
    await sleep(IDLE_MS);
    control(child.pid, '--dump=idle');
    const idleMs = performance.now() - idleFrom;
    control(child.pid, '-i', 'off');
    child.kill('SIGTERM');
    await exited;
    // the dumps are the callgrind file's parts .1 (idle before), .2 (the calls), .3 (settling)
    // and .4 (idle after)
    const [all, compile] = totals(`${out}.2`);
    const [beforeAll, beforeCompile, beforeMajorGc] = totals(`${out}.1`);
    const [idleAll, idleCompile, idleMajorGc] = totals(`${out}.4`);
    // what the process does per wall-clock second anyway (timers: the refresh heartbeat, the
    // log flush, metrics), charged for as long as the calls took; a full GC that falls in an
    // idle window is not such work (MAJOR_GC_FUNCTION), and of the two windows the quieter counts
    const rateBefore = (beforeAll - beforeCompile - beforeMajorGc) / beforeMs;
    const rateAfter = (idleAll - idleCompile - idleMajorGc) / idleMs;
    const perMs = Math.min(rateBefore, rateAfter);
    const timers = perMs * callsMs;
    if (PERF_MAP)
      process.stderr.write(
        `callgrind files ${out}.1 (idle before) to ${out}.4 (idle after), JIT names /tmp/perf-${child.pid}.map\n`,
      );
    return {
      all: all / CALLS,
      compile: compile / CALLS,
      timers: timers / CALLS,
      idlePerSecond: perMs * 1000,
      idleMajorGc: idleMajorGc + beforeMajorGc,
      callsMs,
    };
  } finally {
    await pool.close();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

const build = snapshotGateway();
process.stdout.write(`gateway build ${build.sha256} (${build.builtAt})\n`);
const source = MODE === 'upstream' ? await startMcpUpstream({}) : await startToolService({});
const runs = [];
try {
  if (MODE !== 'upstream') await source.setCatalog('instructions', 10, 'r1', 'A');
  for (let run = 1; run <= RUNS; run++) {
    const { all, compile, timers, idlePerSecond, idleMajorGc, callsMs } = await measure(source);
    const steadyState = all - compile - timers;
    runs.push({ steadyState, all, compile, timers, idlePerSecond, idleMajorGc, callsMs });
    const k = (n) => `${(n / 1000).toFixed(1)}k`;
    process.stdout.write(
      `${MODE} tools/call, ${CALLS} calls after ${WARMUP}: ${k(steadyState)} instructions per call in steady state ` +
        `(${k(all)} in all, ${k(compile)} in V8's compilers, ${k(timers)} of per-second work: ` +
        `${k(idlePerSecond)} a second idle, the calls took ${(callsMs / 1000).toFixed(1)} s` +
        `${idleMajorGc > 1e7 ? `; a full GC of ${(idleMajorGc / 1e6).toFixed(0)}M fell in an idle window, not subtracted` : ''})\n`,
    );
  }
} finally {
  await source.stop();
  await issuer?.stop();
  sink.close();
  if (!PERF_MAP) cleanupTemp();
}
if (JSON_OUT !== undefined)
  writeFileSync(
    JSON_OUT,
    JSON.stringify({
      mode: MODE,
      auth: AUTH,
      node: process.versions.node,
      build: build.sha256,
      nodeFlags: NODE_FLAGS.join(' '),
      calls: CALLS,
      warmup: WARMUP,
      idleMs: IDLE_MS,
      runs,
    }),
  );
