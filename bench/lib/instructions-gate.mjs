// The decision of `npm run bench:gate` (bench/instructions-gate.mjs), apart from the measuring,
// so that test/bench/instructions-gate.e2e-spec.ts can hold it to figures it chooses.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The modes whose growth fails the gate; `proxy` is measured for the ratios only. */
export const GATED_MODES = ['legacy', 'modern', 'upstream'];
export const ALL_MODES = [...GATED_MODES, 'proxy'];
/** A mode fails when its steady state exceeds its baseline by more than this share. */
export const DEFAULT_TOLERANCE = 0.05;

/**
 * V8 flags of the measured process (BENCH_INSTR_NODE_FLAGS replaces them). Under valgrind a
 * process runs about 50 times slower, so V8's wall-clock heuristics see a nearly idle program:
 * the memory reducer starts full GCs that throw away compiled code, which then compiles again,
 * and the background compiler threads (serialized by valgrind) deliver optimized code later the
 * more the machine is loaded. With both, a legacy call counted 326k on a quiet machine and 423k
 * with two busy loops beside it. Without the memory reducer and with V8's helper work on the
 * main thread, such a pair of runs gives 328k and 337k (docs/benchmarks.md, "Counts that do not
 * depend on load"). A baseline holds only for the flags it was recorded with.
 */
export const DEFAULT_NODE_FLAGS = '--single-threaded --no-memory-reducer';

/** The measured process's V8 flags, as a list. */
export function instructionNodeFlags(env) {
  return (env.BENCH_INSTR_NODE_FLAGS ?? DEFAULT_NODE_FLAGS).split(' ').filter(Boolean);
}

/** bench/baselines/instructions-node<major>.json: baselines are per Node major (counts move with V8). */
export function baselineFile(repoRoot, nodeVersion) {
  const major = String(nodeVersion).replace(/^v/, '').split('.')[0];
  return join(repoRoot, 'bench', 'baselines', `instructions-node${major}.json`);
}

/** The baseline at `file`, or undefined when there is none; throws on a malformed one. */
export function readBaseline(file) {
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  for (const mode of ALL_MODES)
    if (typeof parsed?.steadyState?.[mode] !== 'number' || !(parsed.steadyState[mode] > 0))
      throw new Error(`${file}: steadyState.${mode} must be a positive number`);
  return parsed;
}

/**
 * Compares measured steady-state instructions per call with the baseline's:
 * `{ ok, rows: [{ mode, baseline, measured, change, gated, ok }], ratios }`. A gated mode fails
 * when measured > baseline × (1 + tolerance); the proxy never fails (it is the runtime's floor,
 * not our code) but a proxy that moved by more than the tolerance means the machine or the
 * runtime changed, which `note` says.
 */
export function judge(baseline, measured, tolerance = DEFAULT_TOLERANCE) {
  const rows = ALL_MODES.map((mode) => {
    const base = baseline.steadyState[mode];
    const now = measured[mode];
    if (typeof now !== 'number') throw new Error(`no figure was measured for mode ${mode}`);
    const change = now / base - 1;
    const gated = GATED_MODES.includes(mode);
    return {
      mode,
      baseline: base,
      measured: now,
      change,
      gated,
      ok: !gated || change <= tolerance,
    };
  });
  const ratios = Object.fromEntries(
    GATED_MODES.map((mode) => [
      mode,
      {
        baseline: baseline.steadyState[mode] / baseline.steadyState.proxy,
        measured: measured[mode] / measured.proxy,
      },
    ]),
  );
  const proxy = rows.find((r) => r.mode === 'proxy');
  const note =
    proxy !== undefined && Math.abs(proxy.change) > tolerance
      ? `the bare proxy itself moved by ${pct(proxy.change)}: the machine or the runtime differs from the baseline's; compare the ratios, and record a baseline for this environment in a commit of its own`
      : undefined;
  return { ok: rows.every((r) => r.ok), rows, ratios, tolerance, note };
}

const k = (n) => `${(n / 1000).toFixed(1)}k`;
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** The printed table: one row per mode, then the ratios to the bare proxy and the verdict. */
export function formatVerdict(verdict, baselineName) {
  const lines = [
    `instructions per tools/call (steady state) against ${baselineName}, limit +${(verdict.tolerance * 100).toFixed(0)} %:`,
    'mode      baseline  measured  change    verdict',
  ];
  for (const r of verdict.rows)
    lines.push(
      `${r.mode.padEnd(9)} ${k(r.baseline).padStart(8)}  ${k(r.measured).padStart(8)}  ${pct(r.change).padStart(8)}  ${
        r.gated ? (r.ok ? 'ok' : 'FAIL: grew more than the limit') : '(floor, not gated)'
      }`,
    );
  for (const [mode, ratio] of Object.entries(verdict.ratios))
    lines.push(
      `${mode} / proxy: ${ratio.measured.toFixed(3)} (baseline ${ratio.baseline.toFixed(3)})`,
    );
  if (verdict.note !== undefined) lines.push(`note: ${verdict.note}`);
  lines.push(verdict.ok ? 'instructions gate: passed' : 'instructions gate: FAILED');
  return lines.join('\n');
}
