#!/usr/bin/env node
// `npm run bench:gate`: fails when a tools/call costs more instructions than its baseline.
//
// Runs `npm run bench:instructions` (bench/instructions.mjs) for the legacy, modern and upstream
// modes and the bare proxy, two at a time (BENCH_GATE_PARALLEL, default 2: the measure does not
// depend on the machine's load any more, docs/benchmarks.md "Counts that do not depend on
// load", and two at a time take 4 minutes instead of 6.5), and compares each mode's steady
// state with bench/baselines/instructions-node<major>.json for the Node major running it. A
// gated mode that grew by more than BENCH_GATE_TOLERANCE (0.05) is measured once more and the
// lower figure kept: a real regression repeats, a rare outlier does not (the same build repeats
// to about 1 %). Exit 1 when a mode still exceeds its limit, or when there is no baseline for
// this Node major. docs/benchmarks.md, "The instructions gate", says how to read and update it.
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
const TOLERANCE = Number(process.env.BENCH_GATE_TOLERANCE ?? DEFAULT_TOLERANCE);
const PARALLEL = Math.max(1, Number(process.env.BENCH_GATE_PARALLEL) || 2);

/** One `bench/instructions.mjs` run of `mode`: its steady-state instructions per call. */
function measure(mode, dir) {
  const out = join(dir, `${mode}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bench', 'instructions.mjs')], {
      cwd: REPO_ROOT,
      env: { ...process.env, BENCH_INSTR_MODE: mode, BENCH_INSTR_JSON: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (log += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (log += d));
    child.on('exit', (code) => {
      process.stdout.write(log.replace(/^(?=.)/gm, `[${mode}] `));
      if (code !== 0) return reject(new Error(`bench:instructions ${mode} exited with ${code}`));
      const { runs } = JSON.parse(readFileSync(out, 'utf8'));
      resolve(Math.min(...runs.map((r) => r.steadyState)));
    });
  });
}

/** Measures `modes`, at most PARALLEL at once: { mode: steady state }. */
async function measureAll(modes, dir) {
  const figures = {};
  const queue = [...modes];
  const worker = async () => {
    for (let mode = queue.shift(); mode !== undefined; mode = queue.shift())
      figures[mode] = await measure(mode, dir);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, modes.length) }, worker));
  return figures;
}

const name = relative(REPO_ROOT, BASELINE);
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-gate-'));
try {
  if (RECORD) {
    const figures = await measureAll(ALL_MODES, dir);
    const baseline = {
      node: process.versions.node,
      recordedAt: new Date().toISOString(),
      calls: 'bench/instructions.mjs defaults (4000 measured after 10000)',
      nodeFlags: instructionNodeFlags(process.env).join(' '),
      steadyState: Object.fromEntries(ALL_MODES.map((m) => [m, Math.round(figures[m])])),
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
    const figures =
      FIGURES !== undefined
        ? JSON.parse(readFileSync(FIGURES, 'utf8'))
        : await measureAll(ALL_MODES, dir);
    const flags = instructionNodeFlags(process.env).join(' ');
    if (FIGURES === undefined && (baseline.nodeFlags ?? '') !== flags)
      process.stdout.write(
        `note: measuring with V8 flags "${flags}", the baseline was recorded with "${baseline.nodeFlags ?? ''}": the figures are not comparable\n`,
      );
    let verdict = judge(baseline, figures, TOLERANCE);
    const over = verdict.rows.filter((r) => !r.ok).map((r) => r.mode);
    if (FIGURES === undefined && over.length > 0) {
      process.stdout.write(`over the limit: ${over.join(', ')}; measuring them once more\n`);
      const again = await measureAll(over, dir);
      for (const mode of over) figures[mode] = Math.min(figures[mode], again[mode]);
      verdict = judge(baseline, figures, TOLERANCE);
    }
    process.stdout.write(`${formatVerdict(verdict, name)}\n`);
    if (!verdict.ok) process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
