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
 * A gated mode also fails when its work in V8's compilers during the measured calls exceeds
 * the baseline's by more than this share: code that keeps deoptimizing and compiling again is
 * a regression the steady state does not show. Loose, since tier-up timing varies (±4 % seen).
 */
export const COMPILE_TOLERANCE = 0.25;

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

/**
 * Frames of V8's compilers and parsers, by the function's name alone (never its file or library
 * path): the optimizing tiers (compiler, maglev, turboshaft), baseline code, the bytecode
 * generator, the JavaScript parser and scopes, and their zone memory. Work whose tier-up timing
 * varies from run to run, counted apart from the steady state. Not JSON.parse (JsonParser,
 * JSDataObjectBuilder), Node's HTTP parser or String.replace's CompiledReplacement: those are
 * a call's own work.
 */
export const COMPILE_FUNCTION =
  /v8::internal::(?:compiler::|maglev::|turboshaft::|baseline::|interpreter::(?:BytecodeGenerator|BytecodeArrayBuilder|BytecodeRegisterOptimizer)|Parser\b|PreParser|ParserBase|Scanner|Compiler\b|Zone\b|ZoneList|ZoneVector|DeclarationScope|Scope::|AstNodeFactory|AstValueFactory)|Builtins_CompileLazy/;

/**
 * V8's full (mark-compact) garbage collection, by function name: marking, sweeping,
 * evacuation and what they call. One lands in the idle window now and then (the calls'
 * garbage, collected by incremental marking once the process is quiet: about 160M
 * instructions); it is not per-second work and is not subtracted as such. Scavenges (the young
 * generation, which timers' garbage also needs) are not in it.
 */
export const MAJOR_GC_FUNCTION =
  /v8::internal::(?:MarkCompact\w*|\w*Marking\w*|Sweeper|\w*Evacuat\w*|PointersUpdatingVisitor|RelocIteratorBase|ObjectVisitor::VisitRelocInfo|JSDispatchTable::Mark\b|\w*StringTableCleaner|RootMarkingVisitor|MarkBit::|\(anonymous namespace\)::IterateObjectCache)|MainMarkingVisitor|NeedsResetDueToFlushedBytecode/;

/**
 * One line of `callgrind_annotate --inclusive=no`: its count, whether it is compiler work and
 * whether it is full garbage collection, or undefined for a line that is not a function's
 * count (headers, totals).
 */
export function annotatedFrame(line) {
  const m = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
  if (!m || m[2].startsWith('PROGRAM')) return undefined;
  // `<file>:<function> [<object>]`: the object's path and the source file are not the name
  const withoutObject = m[2].replace(/\s*\[[^\]]*\]$/, '');
  const colon = withoutObject.indexOf(':');
  const fn = colon === -1 ? withoutObject : withoutObject.slice(colon + 1);
  return {
    count: Number(m[1].replaceAll(',', '')),
    compile: COMPILE_FUNCTION.test(fn),
    majorGc: MAJOR_GC_FUNCTION.test(fn),
  };
}

/** BENCH_GATE_TOLERANCE as a share: a finite number above 0 and at most 0.2, else an Error. */
export function toleranceFrom(env) {
  const raw = env.BENCH_GATE_TOLERANCE;
  if (raw === undefined) return DEFAULT_TOLERANCE;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 0.2)
    throw new Error(
      `BENCH_GATE_TOLERANCE must be a share above 0 and at most 0.2 (0.05 is 5 %), got ${JSON.stringify(raw)}`,
    );
  return value;
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
export function judge(baseline, measured, tolerance = DEFAULT_TOLERANCE, compile = undefined) {
  const rows = ALL_MODES.map((mode) => {
    const base = baseline.steadyState[mode];
    const now = measured[mode];
    if (typeof now !== 'number') throw new Error(`no figure was measured for mode ${mode}`);
    const change = now / base - 1;
    const gated = GATED_MODES.includes(mode);
    const compileBase = baseline.compile?.[mode];
    const compileNow = compile?.[mode];
    const compileChange =
      typeof compileBase === 'number' && typeof compileNow === 'number'
        ? compileNow / compileBase - 1
        : undefined;
    const compileOk = !gated || compileChange === undefined || compileChange <= COMPILE_TOLERANCE;
    return {
      mode,
      baseline: base,
      measured: now,
      change,
      gated,
      compile:
        compileChange === undefined
          ? undefined
          : { baseline: compileBase, measured: compileNow, change: compileChange, ok: compileOk },
      ok: !gated || (change <= tolerance && compileOk),
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
        !r.gated
          ? '(floor, not gated)'
          : r.change > verdict.tolerance
            ? 'FAIL: grew more than the limit'
            : r.change < -2 * verdict.tolerance
              ? 'ok (far below the baseline: a faster build, or a measure that changed; record a baseline)'
              : 'ok'
      }`,
    );
  for (const r of verdict.rows)
    if (r.compile !== undefined)
      lines.push(
        `${r.mode} in V8's compilers: ${k(r.compile.measured)} (baseline ${k(r.compile.baseline)}, ${pct(r.compile.change)}, limit +${(COMPILE_TOLERANCE * 100).toFixed(0)} %)${
          r.compile.ok ? '' : ' FAIL: code keeps compiling'
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
