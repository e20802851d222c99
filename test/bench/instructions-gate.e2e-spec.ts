import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The CI gate on instructions per call (bench/instructions-gate.mjs, docs/benchmarks.md "The
 * instructions gate"): a mode whose steady state grew by more than 5 % over its baseline fails
 * the run, printing the figures. The gate is driven here with figures instead of callgrind runs
 * (--figures), so the decision and the exit code are what is tested; docs/benchmarks.md records
 * a real run against a deliberately slowed build.
 */
describe('the instructions gate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-gate-test-'));
  const baseline = join(dir, 'baseline.json');
  writeFileSync(
    baseline,
    JSON.stringify({
      node: '24.0.0',
      steadyState: { legacy: 330_000, modern: 340_000, upstream: 400_000, proxy: 285_000 },
    }),
  );

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function gate(figures: Record<string, number>, baselineFile = baseline) {
    const file = join(dir, `figures-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(figures));
    const run = spawnSync(
      process.execPath,
      ['bench/instructions-gate.mjs', '--baseline', baselineFile, '--figures', file],
      { encoding: 'utf8' },
    );
    return { status: run.status, out: run.stdout + run.stderr };
  }

  it('passes a build within 5 % of every baseline, printing each mode and its ratio', () => {
    const { status, out } = gate({
      legacy: 346_000,
      modern: 320_000,
      upstream: 419_000,
      proxy: 285_500,
    });
    expect(status).toBe(0);
    expect(out).toMatch(/legacy\s+330\.0k\s+346\.0k\s+\+4\.8 %\s+ok/);
    expect(out).toMatch(/modern\s+340\.0k\s+320\.0k\s+-5\.9 %\s+ok/);
    expect(out).toMatch(/legacy \/ proxy: 1\.212 \(baseline 1\.158\)/);
    expect(out).toContain('instructions gate: passed');
  });

  it('fails a build whose mode grew by more than 5 %, naming that mode', () => {
    const { status, out } = gate({
      legacy: 330_000,
      modern: 357_400,
      upstream: 400_000,
      proxy: 285_000,
    });
    expect(status).toBe(1);
    expect(out).toMatch(/modern\s+340\.0k\s+357\.4k\s+\+5\.1 %\s+FAIL/);
    expect(out).toMatch(/legacy\s+330\.0k\s+330\.0k\s+\+0\.0 %\s+ok/);
    expect(out).toContain('instructions gate: FAILED');
  });

  it('never fails on the bare proxy, but says when the floor itself moved', () => {
    const { status, out } = gate({
      legacy: 330_000,
      modern: 340_000,
      upstream: 400_000,
      proxy: 320_000,
    });
    expect(status).toBe(0);
    expect(out).toMatch(/proxy\s+285\.0k\s+320\.0k\s+\+12\.3 %\s+\(floor, not gated\)/);
    expect(out).toContain('the bare proxy itself moved by +12.3 %');
  });

  it('fails when no baseline exists for the Node major in use', () => {
    const { status, out } = gate(
      { legacy: 1, modern: 1, upstream: 1, proxy: 1 },
      join(dir, 'instructions-node99.json'),
    );
    expect(status).toBe(1);
    expect(out).toMatch(/no baseline .*instructions-node99\.json/);
  });

  it('a figure missing for a mode is an error, never a pass', () => {
    const { status, out } = gate({ legacy: 330_000, modern: 340_000, proxy: 285_000 });
    expect(status).not.toBe(0);
    expect(out).toContain('no figure was measured for mode upstream');
  });

  it('refuses a tolerance that is not a share above 0 and at most 0.2 (exit 2, nothing judged)', () => {
    for (const tolerance of ['', '5', 'abc', '0', '-0.1']) {
      const file = join(dir, `figures-tolerance.json`);
      writeFileSync(file, JSON.stringify({ legacy: 1, modern: 1, upstream: 1, proxy: 1 }));
      const run = spawnSync(
        process.execPath,
        ['bench/instructions-gate.mjs', '--baseline', baseline, '--figures', file],
        { encoding: 'utf8', env: { ...process.env, BENCH_GATE_TOLERANCE: tolerance } },
      );
      expect(run.status).toBe(2);
      expect(run.stdout).toContain('BENCH_GATE_TOLERANCE must be a share above 0 and at most 0.2');
    }
  });

  /** Runs `code` (an ES module) with bench/lib/instructions-gate.mjs imported as `gate`; its stdout as JSON. */
  function withGateLib(code: string): unknown {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as gate from './bench/lib/instructions-gate.mjs';\n${code}`,
      ],
      { encoding: 'utf8' },
    );
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(run.stdout);
  }

  it("counts a call's own parsing as the call's work: only V8's compilers and code parsers are apart", () => {
    const lines = [
      '52,000 ( 2.0%)  ???:v8::internal::compiler::GraphReducer::ReduceTop() [/usr/bin/node]',
      '9,000 ( 0.3%)  ???:void v8::internal::maglev::MaglevGraphBuilder::Build() [/usr/bin/node]',
      '7,000 ( 0.3%)  ???:v8::internal::ParserBase<v8::internal::Parser>::ParseStatementList() [/x/Compile/node]',
      '2,000 ( 0.1%)  ???:Builtins_CompileLazy [/usr/bin/node]',
      '5,000 ( 0.2%)  ???:v8::internal::JsonParser<unsigned char>::ScanJsonString(bool) [/usr/bin/node]',
      '1,500 ( 0.1%)  ???:v8::internal::Handle<v8::internal::JSObject> v8::internal::JSDataObjectBuilder::BuildFromIterator<v8::internal::JsonParser<unsigned char>::NamedPropertyIterator>() [/usr/bin/node]',
      '880 ( 0.0%)  ???:node::http_parser::Parser::on_headers_complete() [/usr/bin/node]',
      '300 ( 0.0%)  ???:v8::internal::CompiledReplacement::Compile(v8::internal::Isolate*) [/opt/Compiler/node]',
      '4,000 ( 0.2%)  ???:0x000000000a1b2c3d [???]',
      '1,449,496,024 (100.0%)  PROGRAM TOTALS',
      'Ir  file:function',
    ];
    const frames = withGateLib(
      `process.stdout.write(JSON.stringify(${JSON.stringify(lines)}.map((l) => gate.annotatedFrame(l) ?? null)));`,
    ) as ({ count: number; compile: boolean } | null)[];
    expect(frames.map((f) => f?.compile ?? null)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      null,
      null,
    ]);
    expect(frames[0]?.count).toBe(52_000);
  });

  it('tells a full GC that falls in the idle window from per-second work: scavenges stay work', () => {
    const lines = [
      '69,354,383 (36.5%)  ???:void v8::internal::MarkingVisitorBase<v8::internal::MainMarkingVisitor>::ProcessStrongHeapObject<v8::internal::FullHeapObjectSlot>(v8::internal::Tagged<v8::internal::HeapObject>, v8::internal::FullHeapObjectSlot, v8::internal::Tagged<v8::internal::HeapObject>) [/usr/bin/node]',
      '27,520,030 (14.5%)  ???:std::pair<unsigned long, unsigned long> v8::internal::MarkCompactCollector::ProcessMarkingWorklist<(v8::internal::MarkCompactCollector::MarkingWorklistProcessingMode)0>(v8::base::TimeDelta, unsigned long) [/usr/bin/node]',
      '921,325 ( 0.5%)  ???:non-virtual thunk to v8::internal::PointersUpdatingVisitor::VisitRootPointers(v8::internal::Root, char const*, v8::internal::OffHeapFullObjectSlot, v8::internal::OffHeapFullObjectSlot) [/usr/bin/node]',
      '209,436 ( 0.1%)  ???:v8::internal::RootScavengeVisitor::VisitRootPointer(v8::internal::Root, char const*, v8::internal::FullObjectSlot) [/usr/bin/node]',
      '533,478 ( 0.3%)  ???:Builtins_LoadIC [/usr/bin/node]',
      '278,244 ( 0.1%)  /home/iojs/build/ws/out/../deps/uv/src/unix/linux.c:uv__io_poll [/opt/Marking/node]',
    ];
    const frames = withGateLib(
      `process.stdout.write(JSON.stringify(${JSON.stringify(lines)}.map((l) => gate.annotatedFrame(l) ?? null)));`,
    ) as ({ count: number; compile: boolean; majorGc: boolean } | null)[];
    expect(frames.map((f) => f?.majorGc ?? null)).toEqual([true, true, true, false, false, false]);
    expect(frames.map((f) => f?.compile ?? null)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("fails a gated mode whose work in V8's compilers grew by more than 25 %, its steady state unchanged", () => {
    const verdict = withGateLib(
      `const baseline = { steadyState: { legacy: 330000, modern: 340000, upstream: 400000, proxy: 285000 }, compile: { legacy: 300000, modern: 300000, upstream: 300000, proxy: 100000 } };
       const v = gate.judge(baseline, { legacy: 330000, modern: 340000, upstream: 400000, proxy: 285000 }, 0.05, { legacy: 376000, modern: 374000, upstream: 300000, proxy: 200000 });
       process.stdout.write(JSON.stringify({ ok: v.ok, rows: v.rows.map((r) => [r.mode, r.ok]), text: gate.formatVerdict(v, 'b.json') }));`,
    ) as { ok: boolean; rows: [string, boolean][]; text: string };
    expect(verdict.ok).toBe(false);
    expect(verdict.rows).toEqual([
      ['legacy', false],
      ['modern', true],
      ['upstream', true],
      ['proxy', true],
    ]);
    expect(verdict.text).toMatch(
      /legacy in V8's compilers: 376\.0k \(baseline 300\.0k, \+25\.3 %, limit \+25 %\) FAIL/,
    );
  });

  it('has a baseline in the repository for the Node major that runs the suite', () => {
    const major = process.versions.node.split('.')[0];
    expect(existsSync(join('bench', 'baselines', `instructions-node${major}.json`))).toBe(true);
  });
});
