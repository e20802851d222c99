#!/usr/bin/env node
// `npm run bench`: the gateway's benchmark (see docs/benchmarks.md for how to read it).
//
// Everything runs in this process tree on 127.0.0.1: the bench Tool Service, a bare node:http
// proxy and the built gateway (node dist/apps/gateway/main.js). Scenarios:
//   toolsCall   direct / bare proxy / gateway at 1, 16, 64 connections, alternating rounds
//   toolsList   tools/list with 10, 1,000, 10,000 tools
//   memory      RSS idle and under load with 10 and 10,000 tools
//   refresh     a 10,000-tool catalog swapped under tools/call load: event-loop stall, p99
//   coldStart   spawn → readiness 200, spawn → first answered tools/list
//   overload    40 concurrent ~7 MB answers (max RSS), 6 MB nested-bracket answers (loop stall)
//   upstream    tools/call of an upstream MCP server's tool (v1 SDK, stateful session, SSE):
//               direct / bare proxy / gateway at 1 and 16 connections (upstreamCall)
//   fanout      50 upstream MCP servers, one silent: refresh round duration, tools/list p50
//   modern      2026-07-28 clients: tools/call vs bare proxy at 16 connections, and tools/list
//               through ten `lists: live` upstreams (bench/lib/scenario-modern.mjs)
//   auth        tools/call with JWT validation on vs the same gateway without auth, 16 conns
// Output: a table on stdout and bench/results/latest.json.
//
// Env: BENCH_ROUNDS (5; the first is dropped), BENCH_SECONDS (5 per run), BENCH_WARMUP_SECONDS
// (3), BENCH_CONNECTIONS (1,16,64), BENCH_SCENARIOS (call,list,memory,refresh,cold,overload),
// BENCH_OVERLOAD_PARTS (deep,big,streams,hugeList,storm,templateCoverage: BENCH_SCENARIOS=overload BENCH_OVERLOAD_PARTS=deep measures
// the deep-answer stall alone, in about 5 s),
// BENCH_COLD_RUNS (5; 1 when BENCH_ROUNDS < 5), BENCH_GENERATOR (wrk|autocannon), BENCH_INSTALL_WRK=1 (apt-get install
// wrk when missing, as root), BENCH_PIN=0 (no taskset), BENCH_OUT (results file),
// BENCH_GATEWAY_ENV ("LOG_LEVEL=warn …": extra env for every gateway started), BENCH_WAIT_QUIET
// (seconds, at most 600: first wait until the machine has been idle for 5 s, or give up).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import {
  CONNECTIONS,
  CORE_SIDE,
  CORE_TARGET,
  GENERATOR,
  OUT,
  PIN,
  CPUS,
  ROUNDS,
  SCENARIOS,
  SECONDS,
  VARIANTS,
  VARIANT_CONNECTIONS,
  WARMUP,
  int,
  log,
  sleep,
} from './lib/config.mjs';
import { account, checks, measured } from './lib/measure.mjs';
import { machineCpuMs, memoryMb } from './lib/proc.mjs';
import {
  GATEWAY_RUNTIME_ENV,
  LOOP_MONITOR,
  REPO_ROOT,
  benchTempDir,
  cleanupTemp,
  extraGatewayEnv,
  killAll,
  loopHeap,
  snapshotGateway,
  startBareProxy,
  startToolService,
} from './lib/processes.mjs';
import { evaluateTargets, printReport } from './lib/report.mjs';
import { scenarioAuth } from './lib/scenario-auth.mjs';
import { scenarioCapacityRamp, scenarioSoak } from './lib/scenario-capacity.mjs';
import { scenarioColdStart } from './lib/scenario-cold-start.mjs';
import { scenarioFanout } from './lib/scenario-fanout.mjs';
import { scenarioModern } from './lib/scenario-modern.mjs';
import { scenarioOverload } from './lib/scenario-overload.mjs';
import { scenarioRefresh } from './lib/scenario-refresh.mjs';
import { startGatewayFor, toolsListRun } from './lib/scenario-tools-list.mjs';
import { scenarioToolsCall } from './lib/scenario-tools-call.mjs';
import { scenarioUpstreamCall, UPSTREAM_CONNECTIONS } from './lib/scenario-upstream-call.mjs';
import { fmt, median, round } from './lib/stats.mjs';

// ---------------------------------------------------------------- main

/** Extra wait after the 10,000-tool gateway is ready (see the memory scenario below). */
const WORKER_MEMORY_SETTLE_MS = 10_000;

/** Waits (bounded) until other processes use less than 0.25 cores for 5 s in a row. */
async function waitQuiet(maxSeconds) {
  const deadline = Date.now() + Math.min(maxSeconds, 600) * 1000;
  let quietSince = Date.now();
  for (;;) {
    const a = machineCpuMs();
    await sleep(1000);
    const b = machineCpuMs();
    const cores = (b.busyMs - a.busyMs) / 1000;
    if (cores >= 0.25) quietSince = Date.now();
    if (Date.now() - quietSince >= 5000) return true;
    if (Date.now() > deadline) {
      log(
        `the machine did not get quiet in ${maxSeconds} s (last second: ${cores.toFixed(2)} cores busy); going on`,
      );
      return false;
    }
  }
}

async function main() {
  const started = Date.now();
  const cpuModel = os.cpus()[0]?.model ?? 'unknown';
  const meta = {
    date: new Date().toISOString(),
    node: process.versions.node,
    cpus: CPUS,
    cpuModel,
    memGb: round(os.totalmem() / 2 ** 30, 1),
    kernel: os.release(),
    command: `${process.env.BENCH_SCENARIOS ? `BENCH_SCENARIOS=${process.env.BENCH_SCENARIOS} ` : ''}${process.env.BENCH_GATEWAY_ENV ? `BENCH_GATEWAY_ENV="${process.env.BENCH_GATEWAY_ENV}" ` : ''}${process.env.BENCH_VARIANTS !== undefined ? `BENCH_VARIANTS="${process.env.BENCH_VARIANTS}" ` : ''}BENCH_ROUNDS=${ROUNDS} BENCH_SECONDS=${SECONDS} npm run bench`,
    gatewayEnv: extraGatewayEnv(),
    gatewayRuntimeEnv: GATEWAY_RUNTIME_ENV,
    variants: VARIANTS,
    variantConnections: VARIANT_CONNECTIONS,
    upstreamConnections: UPSTREAM_CONNECTIONS,
    scenarios: [...SCENARIOS],
    rounds: ROUNDS,
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    connections: CONNECTIONS,
    generator: GENERATOR,
    pinning: PIN
      ? 'target (gateway / proxy) on core 0, Tool Service on core 1, load generator on the core the target is not on'
      : 'no pinning',
    loadAvgAtStart: os.loadavg().map((x) => round(x, 2)),
  };
  const snapshot = snapshotGateway();
  // no machine paths in a results file (they get committed as recorded runs)
  meta.build = {
    ...snapshot,
    entry: relative(REPO_ROOT, snapshot.entry),
    runFrom: '<bench temp dir>/main.js',
  };
  const git = (args) =>
    spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  meta.build.gitHead = git(['rev-parse', '--short', 'HEAD']);
  meta.build.gitDirtyFiles = git(['status', '--porcelain']).split('\n').filter(Boolean).length;
  log(
    `${GENERATOR}, ${meta.pinning}; rounds ${ROUNDS} × ${SECONDS} s; gateway build ${meta.build.sha256} (${meta.build.builtAt})`,
  );
  const results = { meta };
  if (process.env.BENCH_WAIT_QUIET) {
    log(`waiting up to ${int('BENCH_WAIT_QUIET', 60)} s for a quiet machine`);
    meta.waitedForQuiet = await waitQuiet(int('BENCH_WAIT_QUIET', 60));
    meta.loadAvgAtStart = os.loadavg().map((x) => round(x, 2));
  }

  // The bench Tool Service backs the bundle scenarios only (not overload, upstream, fanout).
  const bundleScenarios = [
    'call',
    'list',
    'memory',
    'refresh',
    'cold',
    'modern',
    'auth',
    'capacity',
    'soak',
  ];
  const ts = bundleScenarios.some((s) => SCENARIOS.has(s))
    ? await startToolService({ core: CORE_SIDE })
    : undefined;
  try {
    let firstCold;
    if (SCENARIOS.has('call') || SCENARIOS.has('list') || SCENARIOS.has('memory')) {
      const { gw, readyMs, cold } = await startGatewayFor(ts, 't10', 10);
      firstCold = cold;
      const proxy = await startBareProxy({ core: CORE_TARGET, upstream: ts.url });
      const variants = [];
      try {
        await sleep(1000);
        const idle = memoryMb(gw.pid).rssMb;
        const memory10 = { tools: 10, readyMs: round(readyMs, 0), idleRssMb: round(idle, 1) };
        if (SCENARIOS.has('call')) {
          for (const v of VARIANTS) {
            const started = await startGatewayFor(ts, 't10', 10, { env: v.env });
            variants.push({ ...v, gw: started.gw });
            await sleep(1000);
            memory10.variants = {
              ...memory10.variants,
              [v.name]: {
                env: v.env,
                readyMs: round(started.readyMs, 0),
                idleRssMb: round(memoryMb(started.gw.pid).rssMb, 1),
              },
            };
            log(
              `variant ${v.name} ${JSON.stringify(v.env)}: idle RSS ${memory10.variants[v.name].idleRssMb} MB`,
            );
          }
          results.toolsCall = await scenarioToolsCall({ ts, proxy, gw, variants });
          for (const v of variants) {
            const runs = results.toolsCall.raw.filter((r) => r.target === v.name);
            memory10.variants[v.name].loadRssMb = round(
              Math.max(...runs.map((r) => r.maxRssMb)),
              1,
            );
          }
          const gwRuns = results.toolsCall.raw.filter((r) => r.target === 'gateway');
          memory10.loadRssMb = round(Math.max(...gwRuns.map((r) => r.maxRssMb)), 1);
        } else if (SCENARIOS.has('memory')) {
          const r = await measured({
            url: gw.mcpUrl,
            mode: 'call',
            connections: 16,
            seconds: SECONDS,
            targetPid: gw.pid,
            upstreamPid: ts.pid,
            loadCore: CORE_SIDE,
          });
          account(r);
          memory10.loadRssMb = round(r.maxRssMb, 1);
        }
        memory10.rssMb = memory10.idleRssMb;
        if (SCENARIOS.has('list')) {
          results.toolsList = { t10: await toolsListRun(gw, 10) };
          memory10.listLoadRssMb = results.toolsList.t10.maxRssMb;
        }
        if (SCENARIOS.has('memory') || SCENARIOS.has('call')) results.memory = { t10: memory10 };
      } finally {
        for (const v of variants) await v.gw.stop();
        await proxy.stop();
        await gw.stop();
      }
    }
    if (SCENARIOS.has('cold')) results.coldStart = await scenarioColdStart(ts, firstCold);
    if (SCENARIOS.has('overload')) results.overload = await scenarioOverload();

    if (SCENARIOS.has('list')) {
      const { gw } = await startGatewayFor(ts, 't1000', 1000);
      try {
        results.toolsList.t1000 = await toolsListRun(gw, 1000);
      } finally {
        await gw.stop();
      }
    }

    if (SCENARIOS.has('list') || SCENARIOS.has('memory') || SCENARIOS.has('refresh')) {
      // One 10,000-tool gateway for memory, tools/list and the swap; the loop monitor is
      // preloaded (two 1 ms timers: negligible next to a 3 MB tools/list).
      const loopFile = join(benchTempDir('loop'), 'loop.json');
      const { gw, readyMs } = await startGatewayFor(ts, 't10000', 10000, {
        nodeArgs: ['--require', LOOP_MONITOR],
        env: { BENCH_LOOP_FILE: loopFile },
      });
      try {
        await sleep(1000);
        const idleRssAt1sMb = round(memoryMb(gw.pid).rssMb, 1);
        // The 10,000-tool manifest was validated in a worker thread. Node 24 returns a
        // terminated worker's heap pages to the OS about 8 s after the worker ends (the main
        // thread unmaps them then; Node 20 at once; `node bench/worker-memory-return.mjs`
        // shows it), so the idle and load figures are taken once that memory is back, and the
        // reading 1 s after readiness is kept beside them (docs/benchmarks.md, "Memory").
        await sleep(WORKER_MEMORY_SETTLE_MS);
        const memory = {
          tools: 10000,
          readyMs: round(readyMs, 0),
          idleRssAt1sMb,
          settleMs: 1000 + WORKER_MEMORY_SETTLE_MS,
          idleRssMb: round(memoryMb(gw.pid).rssMb, 1),
        };
        memory.idleHeap = loopHeap(loopFile);
        log(
          `memory t=10000: ready in ${fmt(readyMs, 0)} ms, idle RSS ${memory.idleRssMb} MB after ${memory.settleMs} ms (${idleRssAt1sMb} MB after 1 s; heap used ${memory.idleHeap?.heapUsedMb} MB); tools/call at 16 connections`,
        );
        const r = await measured({
          url: gw.mcpUrl,
          mode: 'call',
          connections: 16,
          seconds: SECONDS,
          targetPid: gw.pid,
          upstreamPid: ts.pid,
          loadCore: CORE_SIDE,
        });
        account(r);
        memory.loadRssMb = round(r.maxRssMb, 1);
        memory.rssMb = memory.loadRssMb;
        memory.afterLoadHeap = loopHeap(loopFile);
        if (SCENARIOS.has('list')) {
          results.toolsList.t10000 = await toolsListRun(gw, 10000);
          // 16 connections the way MCP clients ask (Accept-Encoding: gzip;
          // docs/operations.md §2 "Compressed lists"), and without it, as before
          const c16Run = async (mode) => {
            const r = await measured({
              url: gw.mcpUrl,
              mode,
              connections: 16,
              seconds: SECONDS,
              targetPid: gw.pid,
              loadCore: CORE_SIDE,
            });
            account(r);
            return r;
          };
          const c16 = await c16Run('list-gzip');
          const c16Identity = await c16Run('list');
          const figures = (r) => ({
            rps: round(r.rps, 1),
            p50Ms: round(r.p50Ms),
            p99Ms: round(r.p99Ms),
            errors: r.errors,
            responseBytes: Math.round(r.bytesPerResponse),
            maxRssMb: round(r.maxRssMb, 1),
          });
          results.toolsList.t10000.c16 = figures(c16);
          results.toolsList.t10000.c16Identity = figures(c16Identity);
          log(
            `tools/list t=10000 c16: gzip p99 ${fmt(c16.p99Ms, 1)} ms, identity p99 ${fmt(c16Identity.p99Ms, 1)} ms`,
          );
          memory.listLoadRssMb = round(
            Math.max(results.toolsList.t10000.maxRssMb, c16.maxRssMb, c16Identity.maxRssMb),
            1,
          );
        }
        if (SCENARIOS.has('list') || SCENARIOS.has('memory'))
          results.memory = { ...(results.memory ?? {}), t10000: memory };
        if (SCENARIOS.has('refresh'))
          results.refresh = { t10000: await scenarioRefresh(ts, gw, 't10000', loopFile, 10000) };
      } finally {
        await gw.stop();
      }
    }
    if (SCENARIOS.has('upstream')) results.upstreamCall = await scenarioUpstreamCall();
    if (SCENARIOS.has('fanout')) results.fanout = await scenarioFanout();
    if (SCENARIOS.has('modern')) results.modern = await scenarioModern(ts);
    if (SCENARIOS.has('auth')) results.auth = await scenarioAuth(ts);
    if (SCENARIOS.has('capacity')) results.capacity = await scenarioCapacityRamp(ts);
    if (SCENARIOS.has('soak')) results.soak = await scenarioSoak(ts);
  } finally {
    await ts?.stop();
    cleanupTemp();
  }

  results.checks = checks;
  results.meta.loadAvgAtEnd = os.loadavg().map((x) => round(x, 2));
  results.meta.elapsedSeconds = round((Date.now() - started) / 1000, 1);
  results.targets = evaluateTargets(results);
  const noise = [...(results.toolsCall?.raw ?? []), ...(results.upstreamCall?.raw ?? [])]
    .filter((r) => r.kept)
    .map((r) => r.noiseCores);
  results.meta.noiseCoresMedian = noise.length ? round(median(noise), 2) : null;
  mkdirSync(join(OUT, '..'), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
  printReport(results);
  if (checks.mismatches > 0) {
    process.stderr.write(
      `FAILED: ${checks.mismatches} responses did not answer their own request id\n`,
    );
    process.exitCode = 1;
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}
main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
  killAll();
  process.exit(1);
});
