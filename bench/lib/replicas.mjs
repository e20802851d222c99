// Configurations measured as several processes each (replicas), for the keys that compare two
// configurations (auth: JWT on vs off; modern: gateway vs bare proxy). One process of a
// configuration can cost up to a fifth more or less per request than another process of
// the same configuration for its whole life (measured: twin gateways 2–20 % apart, medians of
// 5 rounds each, docs/benchmarks.md "Replicas"), so a ratio of one process to one process
// carries that spread whatever the number of rounds. Pooling the runs of BENCH_REPLICAS
// processes per configuration averages it out.
import { int, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { fmt, median, round } from './stats.mjs';

/** Processes per configuration (BENCH_REPLICAS, default 2). */
export const REPLICAS = int('BENCH_REPLICAS', 2);

/**
 * Alternating rounds over every process of every configuration: each round measures each
 * process once for `seconds` at `connections`, in an order rotated by one place per round;
 * round 1 is dropped (kept: false) unless it is the only one.
 *
 * @param configurations `{ name: [target, …] }`, one target (measured()'s argument without
 *   `seconds` and `connections`) per process of that configuration
 * @param label the log prefix (e.g. `auth`)
 * @returns the runs: `{ round, target: name, replica: 1-based, kept, ...measured() figures }`
 */
export async function replicatedRounds({ configurations, rounds, seconds, connections, label }) {
  const slots = Object.entries(configurations).flatMap(([name, targets]) =>
    targets.map((target, i) => ({ name, replica: i + 1, target })),
  );
  const raw = [];
  for (let r = 0; r < rounds; r++) {
    const shift = r % slots.length;
    for (const { name, replica, target } of [...slots.slice(shift), ...slots.slice(0, shift)]) {
      const m = await measured({ ...target, connections, seconds });
      account(m);
      raw.push({ round: r + 1, target: name, replica, kept: r > 0 || rounds === 1, ...m });
      log(
        `${label} round ${r + 1}/${rounds} ${`${name}#${replica}`.padEnd(12)} ${fmt(m.rps, 0)} req/s ` +
          `p50 ${fmt(m.p50Ms, 3)} ms cpu/req ${fmt(m.cpuPerRequestMs * 1000, 1)} µs err ${m.errors} ` +
          `idMismatch ${m.mismatches}`,
      );
    }
  }
  return raw;
}

/**
 * Rounds in which the k-th process of every configuration is measured at the same time: one
 * load generator per process, started together for `seconds` at `connections` each, so the
 * configurations share the target core and whatever else the machine does in those seconds.
 * For configurations of one program that differ in one setting (auth: JWT on or off), where
 * the machine's own swings (up to 2× in CPU per request between runs seconds apart, with no
 * other process busy) are larger than the difference measured. Each process gets a share of
 * the core, so its CPU per request is higher than alone; the ratio is what compares.
 * Same arguments and runs as replicatedRounds; every configuration needs the same number of
 * processes.
 */
export async function simultaneousRounds({ configurations, rounds, seconds, connections, label }) {
  const names = Object.keys(configurations);
  const processes = configurations[names[0]].length;
  const raw = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < processes; k++) {
      const runs = await Promise.all(
        names.map((name) => measured({ ...configurations[name][k], connections, seconds })),
      );
      runs.forEach((m, i) => {
        account(m);
        raw.push({
          round: r + 1,
          target: names[i],
          replica: k + 1,
          kept: r > 0 || rounds === 1,
          ...m,
        });
      });
      log(
        `${label} round ${r + 1}/${rounds} processes #${k + 1} together: ` +
          runs
            .map(
              (m, i) =>
                `${names[i]} ${fmt(m.rps, 0)} req/s cpu/req ${fmt(m.cpuPerRequestMs * 1000, 1)} µs err ${m.errors}`,
            )
            .join('; '),
      );
    }
  }
  return raw;
}

/** The kept runs of one configuration, all its processes pooled. */
export const keptRuns = (raw, name) => raw.filter((r) => r.target === name && r.kept);

/** Median of `key` over one configuration's kept runs (all its processes). */
export const pooledMedian = (raw, name, key) => median(keptRuns(raw, name).map((r) => r[key]));

/**
 * One configuration's pooled figures: medians of rps, p50, p99 and CPU per request (ms), the
 * sums of errors and requests, and each process's own median CPU per request (ms), which
 * shows how far the processes of one configuration differ.
 */
export function pooledFigures(raw, name) {
  const runs = keptRuns(raw, name);
  const replicas = [...new Set(runs.map((r) => r.replica))].sort((a, b) => a - b);
  return {
    rounds: runs.length,
    processes: replicas.length,
    rps: round(pooledMedian(raw, name, 'rps'), 1),
    p50Ms: round(pooledMedian(raw, name, 'p50Ms')),
    p99Ms: round(pooledMedian(raw, name, 'p99Ms')),
    cpuPerRequestMs: round(pooledMedian(raw, name, 'cpuPerRequestMs'), 5),
    cpuPerRequestMsPerProcess: replicas.map((k) =>
      round(median(runs.filter((r) => r.replica === k).map((r) => r.cpuPerRequestMs)), 5),
    ),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    requests: runs.reduce((s, r) => s + r.requests, 0),
  };
}

/**
 * `target` ÷ `reference` in CPU per request, run by run: each kept run of `target` against the
 * run of the same round and replica number of `reference`.
 */
export function perRoundCpuRatio(raw, target, reference) {
  return keptRuns(raw, target).map((t) => {
    const ref = raw.find(
      (r) => r.target === reference && r.round === t.round && r.replica === t.replica,
    );
    return round(ref ? t.cpuPerRequestMs / ref.cpuPerRequestMs : NaN, 2);
  });
}

/** The runs as the results file keeps them (figures rounded, no per-core detail). */
export function rawRuns(raw) {
  return raw.map((r) => ({
    round: r.round,
    kept: r.kept,
    target: r.target,
    replica: r.replica,
    requests: r.requests,
    rps: round(r.rps, 1),
    p50Ms: round(r.p50Ms),
    p99Ms: round(r.p99Ms),
    errors: r.errors,
    idMismatches: r.mismatches,
    cpuPerRequestMs: round(r.cpuPerRequestMs, 5),
    noiseCores: round(r.noiseCores, 2),
  }));
}
