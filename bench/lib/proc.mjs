// Figures read from /proc: CPU time and RSS of one process, busy time of the whole machine.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep the usual 100
}
export const CLK_TCK = ticksPerSecond;

/** utime + stime of a process (all its threads), in ms. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm) ": state is field 3; utime is field 14, stime field 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
export function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/**
 * CPU time of the whole machine (all cores), in ms, from /proc/stat: busyMs is user + nice +
 * system (what processes are charged with; irq, softirq and steal are left out so that
 * loopback packet work is not mistaken for other processes), stealMs the hypervisor's steal.
 */
export function machineCpuMs() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const ms = (ticks) => (ticks * 1000) / ticksPerSecond;
  return { busyMs: ms((v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0)), stealMs: ms(v[7] ?? 0) };
}

/** Samples the RSS of some pids every `everyMs` until stopped; returns the max seen per pid. */
export function sampleRss(pids, everyMs = 100) {
  const max = new Map(pids.map((p) => [p, 0]));
  const take = () => {
    for (const pid of pids) {
      try {
        const { rssMb } = memoryMb(pid);
        if (rssMb > (max.get(pid) ?? 0)) max.set(pid, rssMb);
      } catch {
        // the process is gone; keep what was seen
      }
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

/**
 * Busy and total time of each core, in ticks, from /proc/stat (`cpuN` lines): busy is user +
 * nice + system + irq + softirq (loopback packet work counts: it is done for the processes on
 * that core), total adds idle and iowait; steal is left out of both.
 */
export function perCoreTicks() {
  const cores = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const v = m[2].split(/\s+/).map(Number);
    const busy = (v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0);
    cores[Number(m[1])] = { busy, total: busy + (v[3] ?? 0) + (v[4] ?? 0) };
  }
  return cores;
}

/** Each core's busy share (0..1) between two perCoreTicks() readings. */
export function coreBusyBetween(before, after) {
  return after.map((a, i) => {
    const b = before[i] ?? { busy: 0, total: 0 };
    const total = a.total - b.total;
    return total > 0 ? (a.busy - b.busy) / total : NaN;
  });
}
