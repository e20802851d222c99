// coldStart: spawn → listening, readiness 200 and first answered tools/list.
import { COLD_RUNS, CORE_TARGET, log } from './config.mjs';
import { selfAndChildrenCpuMs } from './measure.mjs';
import { cpuMs, machineCpuMs } from './proc.mjs';
import { spawnGateway, waitFirstToolsList, waitReady } from './processes.mjs';
import { fmt, median, round } from './stats.mjs';

/** Spawn → listening line, readiness 200 and first answered tools/list, polled concurrently. */
export async function coldStartRun(gw) {
  const machine0 = machineCpuMs();
  const self0 = selfAndChildrenCpuMs();
  let cpuToReadyMs = NaN;
  const [readyMs, firstToolsListMs] = await Promise.all([
    waitReady(gw).then((ms) => {
      cpuToReadyMs = cpuMs(gw.pid); // the gateway's own CPU from spawn to readiness
      return ms;
    }),
    waitFirstToolsList(gw),
  ]);
  const listeningMs = gw.marks.listeningAt - gw.spawnedAt;
  const busy = machineCpuMs().busyMs - machine0.busyMs;
  const noise = busy - cpuMs(gw.pid) - (selfAndChildrenCpuMs() - self0);
  return {
    readyMs: round(readyMs, 1),
    firstToolsListMs: round(firstToolsListMs, 1),
    listeningMs: round(listeningMs, 1),
    cpuToReadyMs: round(cpuToReadyMs, 0),
    noiseCores: round(Math.max(0, noise) / Math.max(firstToolsListMs, readyMs), 2),
  };
}

/** Cold start with 10 tools: `first` (the main gateway's own start, if any) plus more spawns up to COLD_RUNS. */
export async function scenarioColdStart(ts, first) {
  await ts.setCatalog('cold', 10, 'r1', 'A');
  const runs = first ? [first] : [];
  while (runs.length < COLD_RUNS) {
    const gw = await spawnGateway({ core: CORE_TARGET, toolService: ts, catalog: 'cold' });
    try {
      runs.push(await coldStartRun(gw));
    } finally {
      await gw.stop();
    }
  }
  runs.forEach((r, i) =>
    log(
      `cold start ${i + 1}/${runs.length}: listening ${fmt(r.listeningMs, 0)} ms, ready ${fmt(r.readyMs, 0)} ms, ` +
        `first tools/list ${fmt(r.firstToolsListMs, 0)} ms, gateway CPU to ready ${r.cpuToReadyMs} ms, noise ${r.noiseCores} cores`,
    ),
  );
  return {
    tools: 10,
    readyMs: round(median(runs.map((r) => r.readyMs)), 1),
    firstToolsListMs: round(median(runs.map((r) => r.firstToolsListMs)), 1),
    listeningMs: round(median(runs.map((r) => r.listeningMs)), 1),
    cpuToReadyMs: round(median(runs.map((r) => r.cpuToReadyMs)), 0),
    runs,
  };
}
