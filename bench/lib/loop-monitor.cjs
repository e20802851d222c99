// Preloaded into the gateway by the bench (`node --require bench/lib/loop-monitor.cjs ...`)
// to measure event-loop stalls *inside* the gateway process without touching its code.
//
// Two probes, both since the last reset:
//  - perf_hooks.monitorEventLoopDelay({ resolution: 1 }): histogram of loop delay (max, p99);
//  - a 1 ms setInterval that records the longest gap between its own ticks (minus 1 ms).
// Figures are written as JSON to the file named by BENCH_LOOP_FILE every 200 ms (a live view);
// on SIGUSR2 they are written to `<BENCH_LOOP_FILE>.window` (with a growing `window` number) and
// then both probes are reset, so each bench window between two signals starts clean.
// Only the bench loads this file; it is inert unless BENCH_LOOP_FILE is set.
'use strict';
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
const { writeFileSync, renameSync } = require('node:fs');

const file = process.env.BENCH_LOOP_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let last = performance.now();
  let maxGapMs = 0;
  let since = Date.now();
  let seq = 0;
  let windowNo = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    const gap = now - last - 1;
    if (gap > maxGapMs) maxGapMs = gap;
    last = now;
  }, 1);
  tick.unref();

  const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
  const memory = () => {
    const m = process.memoryUsage();
    return {
      rssMb: mb(m.rss),
      heapUsedMb: mb(m.heapUsed),
      heapTotalMb: mb(m.heapTotal),
      externalMb: mb(m.external),
      arrayBuffersMb: mb(m.arrayBuffers),
    };
  };
  const write = (target, extra) => {
    const figures = {
      seq: ++seq,
      ...extra,
      pid: process.pid,
      since,
      at: Date.now(),
      maxDelayMs: histogram.max / 1e6,
      p99DelayMs: histogram.percentile(99) / 1e6,
      meanDelayMs: histogram.mean / 1e6,
      maxGapMs,
      ...memory(),
    };
    const tmp = `${target}.tmp`;
    writeFileSync(tmp, JSON.stringify(figures));
    renameSync(tmp, target);
  };
  const periodic = setInterval(() => write(file, {}), 200);
  periodic.unref();
  process.on('SIGUSR2', () => {
    write(`${file}.window`, { window: ++windowNo });
    histogram.reset();
    maxGapMs = 0;
    last = performance.now();
    since = Date.now();
  });
}
