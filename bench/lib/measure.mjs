// One measured load run: the load generator's figures plus the target's CPU per request, its
// RSS and the noise from other processes; and the running tally of id checks.
import { readFileSync } from 'node:fs';
import { GENERATOR } from './config.mjs';
import { runLoad } from './load.mjs';
import {
  CLK_TCK,
  coreBusyBetween,
  cpuMs,
  machineCpuMs,
  memoryMb,
  perCoreTicks,
  sampleRss,
} from './proc.mjs';

/** utime+stime of this process and of its reaped children (wrk), in ms. */
export function selfAndChildrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK;
}

/**
 * One measured load run against `target` with CPU and RSS accounting:
 * cpuPerRequestMs is the target's utime+stime over the run divided by completed requests.
 * noiseCores is CPU used during the run by processes outside the bench, in cores; coreBusy
 * each core's busy share; loadCpuPerRequestMs the load generator's (and this process's) CPU
 * per request. `upstreamPids` (optional) are more upstream processes (e.g. the ten fan-out
 * upstreams of modern.liveFanout, one process each): their CPU is added to the upstream's
 * and not counted as noise.
 */
export async function measured({
  url,
  mode,
  connections,
  seconds,
  targetPid,
  upstreamPid,
  upstreamPids = [],
  loadCore,
  tool,
  headers,
}) {
  const pids = [...new Set([targetPid, upstreamPid, ...upstreamPids].filter(Boolean))];
  const cpu0 = pids.map(cpuMs);
  const machine0 = machineCpuMs();
  const cores0 = perCoreTicks();
  const self0 = selfAndChildrenCpuMs();
  const sampler = sampleRss([targetPid]);
  const r = await runLoad({
    generator: GENERATOR,
    url,
    mode,
    connections,
    seconds,
    core: loadCore,
    tool,
    headers,
  });
  const maxRss = sampler.stop().get(targetPid);
  const cpu1 = pids.map(cpuMs);
  const machine1 = machineCpuMs();
  const cores1 = perCoreTicks();
  const self1 = selfAndChildrenCpuMs();
  const dTarget = cpu1[0] - cpu0[0];
  const dUpstream =
    pids.length > 1 ? pids.reduce((s, _, i) => (i === 0 ? s : s + cpu1[i] - cpu0[i]), 0) : dTarget;
  const ours = pids.reduce((s, _, i) => s + cpu1[i] - cpu0[i], 0) + (self1 - self0);
  const busy = machine1.busyMs - machine0.busyMs;
  return {
    ...r,
    cpuMs: dTarget,
    cpuPerRequestMs: r.requests > 0 ? dTarget / r.requests : NaN,
    upstreamCpuPerRequestMs: r.requests > 0 ? dUpstream / r.requests : NaN,
    rssMb: memoryMb(targetPid).rssMb,
    maxRssMb: maxRss,
    noiseCores: Math.max(0, busy - ours) / 1000 / r.seconds,
    /** Each core's busy share during the run (whoever ran there, the noise included). */
    coreBusy: coreBusyBetween(cores0, cores1),
    /** CPU of this process and the load generator (a reaped child) per completed request. */
    loadCpuPerRequestMs: r.requests > 0 ? (self1 - self0) / r.requests : NaN,
  };
}

export const checks = { requests: 0, matched: 0, mismatches: 0 };
export function account(r) {
  checks.requests += r.requests;
  checks.matched += r.matched;
  checks.mismatches += r.mismatches;
}
