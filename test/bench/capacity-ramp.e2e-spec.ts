import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The keys of `npm run bench`'s capacity ramp and soak (bench/lib/scenario-capacity.mjs,
 * docs/benchmarks.md "Capacity: the streams ramp and the soak"): which step counts as the
 * highest within limits, what one stream costs, and the soak's slope. Driven with made-up steps
 * instead of a ramp run, so the rule is what is tested.
 */
const MODULE = join(__dirname, '..', '..', 'bench', 'lib', 'scenario-capacity.mjs');

function run(expression: string): unknown {
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(MODULE)}); process.stdout.write(JSON.stringify(${expression}));`,
    ],
    { encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout) as unknown;
}

interface Step {
  streams: number;
  idleRssMb: number;
  fds: number;
  p99Ms: number;
  withinLimits: boolean;
}

const step = (streams: number, withinLimits = true): Step => ({
  streams,
  idleRssMb: 100 + streams / 64,
  fds: 30 + streams,
  p99Ms: 10,
  withinLimits,
});

const summarize = (steps: Step[]) =>
  run(`m.summarizeRamp(${JSON.stringify(steps)})`) as Record<string, unknown>;

describe('the capacity ramp keys', () => {
  it('a ramp within limits throughout: its top step, and RSS and FDs per stream over the baseline', () => {
    const summary = summarize([step(0), step(1000), step(2000), step(4000)]);
    expect(summary.maxWithinLimits).toBe(4000);
    // (100 + 4000/64 - 100) MB × 1024 / 4000 streams
    expect(summary.rssKbPerStream).toBe(16);
    expect(summary.fdsPerStream).toBe(1);
    expect(summary.firstOverLimits).toBeNull();
    expect(summary.p99LimitMs).toBe(20);
  });

  it('a step over its limits ends the count, even when a later step is within them again', () => {
    const summary = summarize([step(0), step(1000), step(2000, false), step(3000)]);
    expect(summary.maxWithinLimits).toBe(1000);
    expect((summary.firstOverLimits as Step).streams).toBe(2000);
    expect(summary.rssKbPerStream).toBe(16);
  });

  it('a first step over its limits: none held, no cost per stream', () => {
    const summary = summarize([step(0), step(250, false)]);
    expect(summary.maxWithinLimits).toBe(0);
    expect(summary.rssKbPerStream).toBeNull();
    expect(summary.fdsPerStream).toBeNull();
  });
});

describe('the soak slope', () => {
  it('is the least-squares slope per minute, and null without two distinct minutes', () => {
    expect(
      run(`m.slope([{ x: 0, y: 200 }, { x: 1, y: 201 }, { x: 2, y: 202.5 }, { x: 3, y: 203 }])`),
    ).toBeCloseTo(1.05, 6);
    expect(run(`m.slope([{ x: 5, y: 250 }, { x: 6, y: 250 }, { x: 7, y: 250 }])`)).toBe(0);
    expect(run(`m.slope([{ x: 1, y: 250 }])`)).toBeNull();
  });
});
