// toolsCall: direct, bare proxy and gateway at 1, 16 and 64 connections, alternating rounds;
// gateway variants (BENCH_VARIANTS) in the same rounds at VARIANT_CONNECTIONS.
import {
  CONNECTIONS,
  CORE_SIDE,
  CORE_TARGET,
  ROUNDS,
  SECONDS,
  VARIANT_CONNECTIONS,
  WARMUP,
  log,
} from './config.mjs';
import { account, measured } from './measure.mjs';
import { fmt, median, round } from './stats.mjs';

export async function scenarioToolsCall(ctx) {
  const { ts, proxy, gw, variants = [] } = ctx;
  const targets = {
    direct: {
      url: `${ts.url}/mcp/bench.echo`,
      mode: 'rest',
      targetPid: ts.pid,
      loadCore: CORE_TARGET,
    },
    bareProxy: {
      url: `http://127.0.0.1:${proxy.port}/mcp/bench.echo`,
      mode: 'rest',
      targetPid: proxy.pid,
      upstreamPid: ts.pid,
      loadCore: CORE_SIDE,
    },
    gateway: {
      url: gw.mcpUrl,
      mode: 'call',
      targetPid: gw.pid,
      upstreamPid: ts.pid,
      loadCore: CORE_SIDE,
    },
  };
  const base = Object.keys(targets);
  for (const v of variants) {
    targets[v.name] = {
      url: v.gw.mcpUrl,
      mode: 'call',
      targetPid: v.gw.pid,
      upstreamPid: ts.pid,
      loadCore: CORE_SIDE,
    };
  }
  const names = Object.keys(targets);
  const variantNames = variants.map((v) => v.name);
  const namesAt = (c) => (VARIANT_CONNECTIONS.includes(c) ? names : base);

  log(`tools/call warm-up: ${WARMUP} s per target at 16 connections`);
  for (const name of names)
    account(await measured({ ...targets[name], connections: 16, seconds: WARMUP }));

  const raw = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [ci, c] of CONNECTIONS.entries()) {
      // Alternate the order so no target always runs first (or right after the same one).
      const here = namesAt(c);
      const shift = (round + ci) % here.length;
      const order = [...here.slice(shift), ...here.slice(0, shift)];
      for (const name of order) {
        const r = await measured({ ...targets[name], connections: c, seconds: SECONDS });
        account(r);
        raw.push({
          round: round + 1,
          connections: c,
          target: name,
          kept: round > 0 || ROUNDS === 1,
          ...r,
        });
        log(
          `round ${round + 1}/${ROUNDS} c=${c} ${name.padEnd(14)} ${fmt(r.rps, 0)} req/s p50 ${fmt(r.p50Ms, 3)} ms ` +
            `p99 ${fmt(r.p99Ms, 3)} ms cpu/req ${fmt(r.cpuPerRequestMs * 1000, 1)} µs err ${r.errors} idMismatch ${r.mismatches}`,
        );
      }
    }
  }

  const out = {};
  for (const c of CONNECTIONS) {
    const entry = {};
    for (const name of namesAt(c)) {
      const runs = raw.filter((r) => r.connections === c && r.target === name && r.kept);
      entry[name] = {
        rounds: runs.length,
        rps: round(median(runs.map((r) => r.rps)), 1),
        p50Ms: round(median(runs.map((r) => r.p50Ms))),
        p99Ms: round(median(runs.map((r) => r.p99Ms))),
        cpuPerRequestMs: round(median(runs.map((r) => r.cpuPerRequestMs)), 5),
        upstreamCpuPerRequestMs: round(median(runs.map((r) => r.upstreamCpuPerRequestMs)), 5),
        rssMb: round(Math.max(...runs.map((r) => r.maxRssMb)), 1),
        errors: runs.reduce((s, r) => s + r.errors, 0),
        idMismatches: runs.reduce((s, r) => s + r.mismatches, 0),
        requests: runs.reduce((s, r) => s + r.requests, 0),
        noiseCores: round(median(runs.map((r) => r.noiseCores)), 2),
      };
    }
    // CPU per request of `target` ÷ that of `reference`, round by round (same minutes).
    const perRoundRatio = (target, reference) =>
      raw
        .filter((r) => r.connections === c && r.kept && r.target === target)
        .map((g) => {
          const p = raw.find(
            (r) => r.connections === c && r.round === g.round && r.target === reference,
          );
          return p ? g.cpuPerRequestMs / p.cpuPerRequestMs : NaN;
        });
    const perRound = perRoundRatio('gateway', 'bareProxy');
    const g = entry.gateway;
    const p = entry.bareProxy;
    const d = entry.direct;
    out[`c${c}`] = {
      ...entry,
      cpuPerRequestRatioVsBareProxy: round(g.cpuPerRequestMs / p.cpuPerRequestMs, 2),
      cpuPerRequestRatioVsBareProxyPerRound: perRound.map((x) => round(x, 2)),
      rpsRatioVsBareProxy: round(g.rps / p.rps, 2),
      rpsRatioVsDirect: round(g.rps / d.rps, 2),
      addedP50Ms: round(g.p50Ms - d.p50Ms),
      addedP50VsBareProxyMs: round(g.p50Ms - p.p50Ms),
      bareProxyAddedP50Ms: round(p.p50Ms - d.p50Ms),
      addedP99Ms: round(g.p99Ms - d.p99Ms),
    };
    const vs = {};
    for (const name of variantNames.filter(() => VARIANT_CONNECTIONS.includes(c))) {
      const v = entry[name];
      vs[name] = {
        cpuPerRequestRatioVsBareProxy: round(v.cpuPerRequestMs / p.cpuPerRequestMs, 2),
        cpuPerRequestRatioVsBareProxyPerRound: perRoundRatio(name, 'bareProxy').map((x) =>
          round(x, 2),
        ),
        cpuPerRequestRatioVsGateway: round(v.cpuPerRequestMs / g.cpuPerRequestMs, 2),
        cpuPerRequestRatioVsGatewayPerRound: perRoundRatio(name, 'gateway').map((x) => round(x, 2)),
        rpsRatioVsGateway: round(v.rps / g.rps, 2),
        addedP50VsGatewayMs: round(v.p50Ms - g.p50Ms),
      };
    }
    if (Object.keys(vs).length > 0) out[`c${c}`].variants = vs;
  }
  out.raw = raw.map((r) => ({
    round: r.round,
    kept: r.kept,
    connections: r.connections,
    target: r.target,
    requests: r.requests,
    rps: round(r.rps, 1),
    p50Ms: round(r.p50Ms),
    p90Ms: round(r.p90Ms),
    p99Ms: round(r.p99Ms),
    maxMs: round(r.maxMs),
    errors: r.errors,
    errorDetail: r.errorDetail,
    matched: r.matched,
    idMismatches: r.mismatches,
    cpuMs: round(r.cpuMs, 1),
    cpuPerRequestMs: round(r.cpuPerRequestMs, 5),
    upstreamCpuPerRequestMs: round(r.upstreamCpuPerRequestMs, 5),
    rssMb: round(r.rssMb, 1),
    maxRssMb: round(r.maxRssMb, 1),
    noiseCores: round(r.noiseCores, 2),
  }));
  return out;
}
