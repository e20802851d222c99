#!/usr/bin/env node
// `npm run bench:gate`: fails when a tools/call costs more instructions than its baseline.
//
// Runs `npm run bench:instructions` (bench/instructions.mjs) for the legacy, modern and upstream
// modes and the bare proxy, two at a time (BENCH_GATE_PARALLEL, default 2: timers and V8's
// heuristics no longer move the count, docs/benchmarks.md "Counts that do not depend on load",
// and two at a time take 4 minutes instead of 6.5; other work beside the gate still can, "The
// gate runs alone"), and compares each mode's steady
// state with bench/baselines/instructions-node<major>.json for the Node major running it. A
// gated mode that grew by more than BENCH_GATE_TOLERANCE (0.05; a share above 0, at most 0.2)
// is measured again, up to BENCH_GATE_RETRIES (4) more times, until one run is within the limit,
// and judged on its lowest run: what disturbs a count (a GC, a compile or a timer landing in the
// measured window, a neighbour's load) only adds instructions, while a regression raises every
// run, the lowest too (docs/benchmarks.md, "The instructions gate"). A gated mode whose work in V8's
// compilers grew by more than 25 % fails too. The measuring parameters (BENCH_INSTR_CALLS,
// _WARMUP, _IDLE_MS, _RUNS) are never passed on: the baseline's are used; other V8 flags than
// the baseline's, or modes measured on different builds, fail the gate. Exit 1 when a mode still
// exceeds its limit, or when there is no baseline for this Node major; 2 for a bad tolerance.
// docs/benchmarks.md, "The instructions gate", says how to read and update it.
//
//   --record          measure and write the baseline for this Node major (commit it on its own,
//                     with the reason in the message)
//   --figures FILE    judge the figures in FILE ({"legacy": n, "modern": n, …}) instead of
//                     measuring (how the gate's own test drives it)
//   --baseline FILE   another baseline file
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import {
  ALL_MODES,
  DEFAULT_TOLERANCE,
  baselineFile,
  formatVerdict,
  instructionNodeFlags,
  judge,
  readBaseline,
  toleranceFrom,
} from './lib/instructions-gate.mjs';
import { REPO_ROOT } from './lib/processes.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const RECORD = args.includes('--record');
const FIGURES = option('--figures');
const BASELINE = option('--baseline') ?? baselineFile(REPO_ROOT, process.versions.node);
let TOLERANCE = DEFAULT_TOLERANCE;
try {
  TOLERANCE = toleranceFrom(process.env);
} catch (err) {
  process.stdout.write(`instructions gate: ${err.message}\n`);
  process.exit(2);
}
/** What the baseline was recorded with: the measured children never take another value. */
const MEASURE_PARAMETERS = [
  'BENCH_INSTR_CALLS',
  'BENCH_INSTR_WARMUP',
  'BENCH_INSTR_IDLE_MS',
  'BENCH_INSTR_RUNS',
];
const PARALLEL = Math.max(1, Number(process.env.BENCH_GATE_PARALLEL) || 2);
/** More runs of a mode over the limit before it fails: one disturbed run must not fail CI. */
const RETRIES = Math.min(8, Math.max(0, Math.floor(Number(process.env.BENCH_GATE_RETRIES ?? 4))));

/** One `bench/instructions.mjs` run of `mode`: { steady, compile, build } per call. */
function measure(mode, dir) {
  const out = join(dir, `${mode}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const env = { ...process.env, BENCH_INSTR_MODE: mode, BENCH_INSTR_JSON: out };
  for (const name of MEASURE_PARAMETERS) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bench', 'instructions.mjs')], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (log += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (log += d));
    child.on('exit', (code) => {
      process.stdout.write(log.replace(/^(?=.)/gm, `[${mode}] `));
      if (code !== 0) return reject(new Error(`bench:instructions ${mode} exited with ${code}`));
      const { runs, build } = JSON.parse(readFileSync(out, 'utf8'));
      const [run] = runs;
      resolve({ steady: run.steadyState, compile: run.compile, build });
    });
  });
}

/**
 * Measures `modes`, at most PARALLEL at once: { figures: { mode: steady state }, compile:
 * { mode: compiler work }, builds: the builds measured (each run copies dist/ when it starts) }.
 */
async function measureAll(modes, dir) {
  const figures = {};
  const compile = {};
  const builds = new Set();
  const queue = [...modes];
  const worker = async () => {
    for (let mode = queue.shift(); mode !== undefined; mode = queue.shift()) {
      const run = await measure(mode, dir);
      figures[mode] = run.steady;
      compile[mode] = run.compile;
      builds.add(run.build);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, modes.length) }, worker));
  return { figures, compile, builds };
}

/** Fails the gate with a reason (no table: the figures are not comparable). */
function refuse(reason) {
  process.stdout.write(`instructions gate: FAILED: ${reason}\n`);
  process.exit(1);
}

const name = relative(REPO_ROOT, BASELINE);
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-gate-'));
// removed on every way out, process.exit included
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
if (RECORD) {
  const { figures, compile, builds } = await measureAll(ALL_MODES, dir);
  if (builds.size !== 1) refuse('dist/ changed while the modes were measured; build, then record');
  const baseline = {
    node: process.versions.node,
    recordedAt: new Date().toISOString(),
    calls: 'bench/instructions.mjs defaults (4000 measured after 10000, 10 s idle)',
    nodeFlags: instructionNodeFlags(process.env).join(' '),
    steadyState: Object.fromEntries(ALL_MODES.map((m) => [m, Math.round(figures[m])])),
    compile: Object.fromEntries(ALL_MODES.map((m) => [m, Math.round(compile[m])])),
  };
  writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
  process.stdout.write(
    `wrote ${name}: ${JSON.stringify(baseline.steadyState)}\ncommit it on its own, with the reason in the message\n`,
  );
} else {
  const baseline = readBaseline(BASELINE);
  if (baseline === undefined) {
    process.stdout.write(
      `instructions gate: FAILED: no baseline ${name} for Node ${process.versions.node}; record one with \`npm run bench:gate -- --record\` in a commit of its own\n`,
    );
    process.exit(1);
  }
  const flags = instructionNodeFlags(process.env).join(' ');
  if (FIGURES === undefined && (baseline.nodeFlags ?? '') !== flags)
    refuse(
      `measuring with V8 flags "${flags}", the baseline was recorded with "${baseline.nodeFlags ?? ''}": the figures are not comparable`,
    );
  let figures;
  let compile;
  let builds = new Set();
  if (FIGURES !== undefined) figures = JSON.parse(readFileSync(FIGURES, 'utf8'));
  else {
    const measured = await measureAll(ALL_MODES, dir);
    if (measured.builds.size !== 1) refuse('dist/ changed while the modes were measured');
    ({ figures, compile, builds } = measured);
  }
  let verdict = judge(baseline, figures, TOLERANCE, compile);
  if (FIGURES === undefined) {
    // Disturbances only add instructions and a regression raises every run: a mode over the
    // limit is measured again until a run is within it (or the retries are spent), one mode at
    // a time, and its lowest run is judged.
    const runs = Object.fromEntries(
      verdict.rows
        .filter((r) => !r.ok)
        .map((r) => [r.mode, [{ steady: figures[r.mode], compile: compile[r.mode] }]]),
    );
    for (const mode of Object.keys(runs)) {
      process.stdout.write(`over the limit: ${mode}; measuring it again (up to ${RETRIES} runs)\n`);
      for (let i = 0; i < RETRIES; i += 1) {
        const again = await measureAll([mode], dir);
        if (!builds.has([...again.builds][0]))
          refuse('dist/ changed while the modes were measured');
        runs[mode].push({ steady: again.figures[mode], compile: again.compile[mode] });
        const lowest = runs[mode].reduce((a, b) => (b.steady < a.steady ? b : a));
        figures[mode] = lowest.steady;
        compile[mode] = lowest.compile;
        verdict = judge(baseline, figures, TOLERANCE, compile);
        if (verdict.rows.find((r) => r.mode === mode)?.ok) break;
      }
      process.stdout.write(
        `${mode}: ${runs[mode].map((r) => `${(r.steady / 1000).toFixed(1)}k`).join(', ')}; judged on the lowest\n`,
      );
    }
  }
  process.stdout.write(`${formatVerdict(verdict, name)}\n`);
  if (!verdict.ok) process.exitCode = 1;
}
