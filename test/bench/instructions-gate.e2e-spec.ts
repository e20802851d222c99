import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
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

  it('has a baseline in the repository for the Node major that runs the suite', () => {
    const major = process.versions.node.split('.')[0];
    expect(existsSync(join('bench', 'baselines', `instructions-node${major}.json`))).toBe(true);
  });
});
