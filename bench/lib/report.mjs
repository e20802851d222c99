// The targets (docs/benchmarks.md "Targets"), evaluated on a results object, and the human table.
import { CONNECTIONS, OUT } from './config.mjs';
import { UPSTREAM_CONNECTIONS } from './scenario-upstream-call.mjs';
import { fmt, median, round, table } from './stats.mjs';

export function evaluateTargets(results) {
  const get = (path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), results);
  const defs = [
    [
      'auth.toolsCall.c16.cpuPerRequestRatioVsNoAuth',
      '<=',
      1.15,
      '×',
      'gateway CPU per tools/call with JWT validation vs without auth, 16 conns',
    ],
    [
      'toolsCall.c16.cpuPerRequestRatioVsBareProxy',
      '<=',
      2,
      '×',
      'gateway CPU per tools/call vs bare proxy, 16 conns',
    ],
    ['toolsCall.c1.addedP50Ms', '<=', 0.5, 'ms', 'added p50 vs direct, 1 conn'],
    ['toolsList.t10000.p50Ms', '<', 10, 'ms', 'tools/list p50, 10,000 tools'],
    [
      'refresh.t10000.maxEventLoopStallMs',
      '<=',
      50,
      'ms',
      'longest event-loop stall, 10,000-tool swap',
    ],
    ['memory.t10.idleRssMb', '<=', 100, 'MB', 'RSS idle, 10 tools'],
    ['memory.t10000.rssMb', '<=', 160, 'MB', 'RSS under load, 10,000 tools'],
    ['coldStart.readyMs', '<=', 1500, 'ms', 'spawn → readiness 200'],
    ['toolsList.t10000.c16.p99Ms', '<=', 200, 'ms', 'tools/list p99, 10,000 tools, 16 conns, gzip'],
    [
      'overload.bigAnswers.c40.maxRssMb',
      '<=',
      400,
      'MB',
      'max RSS, 40 concurrent ~7 MB answers (chart limit 512 Mi)',
    ],
    [
      'overload.deepAnswers.maxEventLoopStallMs',
      '<=',
      50,
      'ms',
      'longest event-loop stall, 6 MB nested-bracket answers',
    ],
    [
      'overload.stalledStreams.rssGrowthMb',
      '<=',
      64,
      'MB',
      'RSS growth, 10 listen clients not reading, ~1,000 upstream notifications/s for 20 s',
    ],
    [
      'overload.stalledStreams.closedSlowConsumers',
      '>=',
      10,
      '',
      'of those 10 streams, closed as slow consumers (listen.maxQueuedBytes)',
    ],
    [
      'overload.hugeUpstreamList.maxEventLoopStallMs',
      '<=',
      50,
      'ms',
      'longest event-loop stall, refresh rounds of a 40,000-tool upstream list',
    ],
    [
      'overload.hugeUpstreamList.maxRssMb',
      '<=',
      250,
      'MB',
      'max RSS, refresh rounds of a 40,000-tool upstream list',
    ],
    [
      'overload.templateCoverage.publishMs',
      '<=',
      1000,
      'ms',
      'refresh round publishing 10,000 templates x 10,000 resources of a later upstream',
    ],
    [
      'overload.listChangedStorm.stormingUpstreamPulls',
      '<=',
      3,
      'pulls',
      'pulls of an upstream sending 100 list_changed in 1 s',
    ],
    [
      'overload.listChangedStorm.otherSourcePulls',
      '<=',
      0,
      'pulls',
      'pulls of the other sources meanwhile (= 0)',
    ],
    [
      'upstreamCall.c16.throughputRatioVsDirect',
      '>=',
      0.8,
      '×',
      'upstream tools/call req/s, gateway ÷ direct, 16 conns',
    ],
    [
      'upstreamCall.c16.cpuPerRequestRatioVsBareProxy',
      '<=',
      2,
      '×',
      'gateway CPU per upstream tools/call vs bare proxy, 16 conns',
    ],
    [
      'upstreamCall.c1.addedP50Ms',
      '<=',
      0.5,
      'ms',
      'upstream tools/call added p50 vs direct, 1 conn',
    ],
    [
      'fanout.u50.refreshMs',
      '<=',
      // listMillis + 250: the straggler's deadline plus the rest of the round
      (r) => (typeof r.fanout?.u50?.listMillis === 'number' ? r.fanout.u50.listMillis + 250 : null),
      'ms',
      'refresh round over 50 upstreams, one silent (listMillis + 250)',
    ],
    ['fanout.u50.toolsListP50Ms', '<', 10, 'ms', 'tools/list p50, 50 upstreams merged'],
    [
      'modern.toolsCall.c16.cpuPerRequestRatioVsBareProxy',
      '<=',
      2,
      '×',
      'gateway CPU per 2026-07-28 tools/call vs bare proxy, 16 conns',
    ],
    [
      'modern.liveFanout.u10.p50Ms',
      '<=',
      // the slowest live upstream's own p50 + 3 ms (docs/benchmarks.md "MCP 2026-07-28 clients")
      (r) =>
        typeof r.modern?.liveFanout?.u10?.slowestUpstreamP50Ms === 'number'
          ? round(r.modern.liveFanout.u10.slowestUpstreamP50Ms + 3, 3)
          : null,
      'ms',
      '2026 tools/list p50, 10 lists: live upstreams (slowest own p50 + 3)',
    ],
    [
      'capacity.streams.maxWithinLimits',
      '>=',
      4000,
      'streams',
      'open streams (2025 GET + 2026 listen) with < 0.1 % errors and p99 ≤ 2× under tools/call',
    ],
    [
      'capacity.streams.rssKbPerStream',
      '<=',
      40,
      'KB',
      'RSS per idle open stream, at the highest step within limits',
    ],
    [
      'soak.rssSlopeMbPerMin',
      '<=',
      1,
      'MB/min',
      'RSS slope after warm-up, 10 min of calls, lists, refreshes and stream churn',
    ],
  ];
  return defs.map(([metric, op, limitDef, unit, what]) => {
    const value = get(metric);
    const limit = typeof limitDef === 'function' ? limitDef(results) : limitDef;
    if (typeof value !== 'number' || typeof limit !== 'number')
      return { metric, what, op, limit, unit, value: null, met: null };
    const met = op === '<' ? value < limit : op === '>=' ? value >= limit : value <= limit;
    return {
      metric,
      what,
      op,
      limit,
      unit,
      value,
      met,
      overBy: met ? 0 : round(op === '>=' ? limit - value : value - limit, 3),
      ratioToLimit: round(value / limit, 2),
    };
  });
}

export function printReport(results) {
  const out = [];
  const m = results.meta;
  out.push('');
  out.push(
    `mcp-gateway bench — ${m.date} — ${m.cpuModel} × ${m.cpus} — Node ${m.node} — ${m.generator}, ${m.pinning}`,
  );
  out.push(
    `rounds ${m.rounds} × ${m.seconds} s (first dropped), warm-up ${m.warmupSeconds} s; medians of kept rounds`,
  );
  out.push(
    `gateway build ${m.build.sha256} (built ${m.build.builtAt}; git ${m.build.gitHead} + ${m.build.gitDirtyFiles} changed files)${Object.keys(m.gatewayEnv).length ? `; gateway env ${JSON.stringify(m.gatewayEnv)}` : ''}`,
  );
  out.push(
    `machine load: ${m.loadAvgAtStart.join(' ')} at start, ${m.loadAvgAtEnd.join(' ')} at end ("noise cores" = CPU used by other processes during a run)`,
  );
  if (results.toolsCall) {
    out.push('', 'tools/call (echo tool)');
    const rows = [
      [
        'conns / target',
        'req/s',
        'p50 ms',
        'p99 ms',
        'cpu/req µs',
        'upstream µs',
        'RSS MB',
        'errors',
        'id mism.',
        'noise cores',
      ],
    ];
    for (const c of CONNECTIONS) {
      const e = results.toolsCall[`c${c}`];
      for (const name of ['direct', 'bareProxy', 'gateway', ...Object.keys(e.variants ?? {})]) {
        const t = e[name];
        rows.push([
          `c${c} ${name}`,
          fmt(t.rps, 0),
          fmt(t.p50Ms, 3),
          fmt(t.p99Ms, 3),
          fmt(t.cpuPerRequestMs * 1000, 1),
          fmt(t.upstreamCpuPerRequestMs * 1000, 1),
          fmt(t.rssMb, 1),
          String(t.errors),
          String(t.idMismatches),
          fmt(t.noiseCores, 2),
        ]);
      }
    }
    out.push(table(rows));
    const r2 = [
      [
        'conns',
        'cpu/req gw÷proxy',
        'per round',
        'req/s gw÷proxy',
        'added p50 vs direct ms',
        'vs proxy ms',
        'proxy added p50 ms',
      ],
    ];
    for (const c of CONNECTIONS) {
      const e = results.toolsCall[`c${c}`];
      r2.push([
        `c${c}`,
        fmt(e.cpuPerRequestRatioVsBareProxy, 2),
        e.cpuPerRequestRatioVsBareProxyPerRound.map((x) => fmt(x, 2)).join(' '),
        fmt(e.rpsRatioVsBareProxy, 2),
        fmt(e.addedP50Ms, 3),
        fmt(e.addedP50VsBareProxyMs, 3),
        fmt(e.bareProxyAddedP50Ms, 3),
      ]);
    }
    out.push('', table(r2));
    const r3 = [
      [
        'conns / variant',
        'env',
        'cpu/req ÷proxy',
        'per round',
        '÷gateway',
        'per round',
        'idle RSS MB',
        'load RSS MB',
      ],
    ];
    for (const c of CONNECTIONS) {
      for (const [name, v] of Object.entries(results.toolsCall[`c${c}`].variants ?? {})) {
        const mem = results.memory?.t10?.variants?.[name];
        r3.push([
          `c${c} ${name}`,
          Object.entries(results.meta.variants.find((x) => x.name === name)?.env ?? {})
            .map(([k, val]) => `${k}=${val}`)
            .join(' '),
          fmt(v.cpuPerRequestRatioVsBareProxy, 2),
          v.cpuPerRequestRatioVsBareProxyPerRound.map((x) => fmt(x, 2)).join(' '),
          fmt(v.cpuPerRequestRatioVsGateway, 2),
          v.cpuPerRequestRatioVsGatewayPerRound.map((x) => fmt(x, 2)).join(' '),
          fmt(mem?.idleRssMb, 1),
          fmt(mem?.loadRssMb, 1),
        ]);
      }
    }
    if (r3.length > 1) {
      out.push(
        '',
        `gateway variants, same rounds (the gateway runs with ${Object.entries(
          results.meta.gatewayRuntimeEnv,
        )
          .map(([k, val]) => `${k}=${val}`)
          .join(' ')}; an empty value unsets it)`,
        table(r3),
      );
    }
  }
  if (results.toolsList) {
    out.push('', 'tools/list (1 connection)');
    const rows = [
      ['tools', 'p50 ms', 'p99 ms', 'req/s', 'body bytes', 'cpu/req ms', 'errors', 'id mism.'],
    ];
    for (const [k, t] of Object.entries(results.toolsList))
      rows.push([
        k,
        fmt(t.p50Ms, 3),
        fmt(t.p99Ms, 3),
        fmt(t.rps, 0),
        String(t.bodyBytes),
        fmt(t.cpuPerRequestMs, 3),
        String(t.errors),
        String(t.idMismatches),
      ]);
    out.push(table(rows));
  }
  if (results.memory) {
    out.push('', 'memory (gateway RSS)');
    const rows = [['tools', 'idle MB', 'tools/call c16 max MB', 'tools/list max MB', 'ready ms']];
    for (const [k, t] of Object.entries(results.memory))
      rows.push([
        k,
        fmt(t.idleRssMb, 1),
        fmt(t.loadRssMb, 1),
        fmt(t.listLoadRssMb, 1),
        fmt(t.readyMs, 0),
      ]);
    out.push(table(rows));
  }
  if (results.refresh?.t10000) {
    const r = results.refresh.t10000;
    out.push(
      '',
      `refresh: swap of a ${r.tools}-tool catalog (${r.manifestBytes} bytes) under tools/call at 16 connections`,
    );
    out.push(
      table([
        [
          'window',
          'max loop stall ms',
          'p50 ms',
          'p99 ms',
          'max ms',
          'req/s',
          'probe p99 ms',
          'probe max ms',
        ],
        [
          'baseline',
          fmt(r.baselineMaxEventLoopStallMs, 1),
          fmt(r.baselineP50Ms, 3),
          fmt(r.baselineP99Ms, 3),
          fmt(r.baselineMaxMs, 3),
          fmt(r.baselineRps, 0),
          fmt(r.probeBaseline.p99Ms, 3),
          fmt(r.probeBaseline.maxMs, 3),
        ],
        [
          'with swap',
          fmt(r.maxEventLoopStallMs, 1),
          fmt(r.p50Ms, 3),
          fmt(r.p99Ms, 3),
          fmt(r.maxMs, 3),
          fmt(r.rps, 0),
          fmt(r.probeInSwap.p99Ms, 3),
          fmt(r.probeInSwap.maxMs, 3),
        ],
      ]),
    );
    out.push(
      `refresh took ${r.refreshMs} ms (trigger answered ${r.triggerErrorCode}); swapped: ${r.swapped}; probe calls during the refresh: ${r.probeInSwap.samples}`,
    );
  }
  if (results.upstreamCall) printUpstreamCall(out, results.upstreamCall);
  if (results.fanout?.u50) printFanout(out, results.fanout.u50);
  if (results.modern) printModern(out, results.modern);
  if (results.capacity?.streams) printCapacity(out, results.capacity.streams);
  if (results.soak) {
    const k = results.soak;
    out.push(
      '',
      `soak (${k.seconds} s, ${k.streams} streams churned ${k.churned}): RSS ${k.rssMbAtStart} → ${k.rssMbAtEnd} MB (max ${k.rssMbMax}), slope ${k.rssSlopeMbPerMin} MB/min from minute ${k.slopeFromMinute} (heap used ${k.heapUsedMbAtStart} → ${k.heapUsedMbAtEnd} MB, ${k.heapUsedSlopeMbPerMin} MB/min); FDs ${k.fdsAtStart} → ${k.fdsAtEnd}; loop p99 ${k.loopP99MsAtStart} → ${k.loopP99MsAtEnd} ms; calls ${k.calls} (errors ${k.callErrors}), lists ${k.lists} (errors ${k.listErrors}), revisions ${k.revisions}, churn refused ${k.churnRefused}`,
    );
  }
  if (results.coldStart) {
    const c = results.coldStart;
    out.push(
      '',
      `cold start (10 tools, median of ${c.runs.length}): listening ${fmt(c.listeningMs, 0)} ms, ready ${fmt(c.readyMs, 0)} ms, first tools/list ${fmt(c.firstToolsListMs, 0)} ms; gateway CPU spent to ready ${fmt(c.cpuToReadyMs, 0)} ms`,
    );
    out.push(
      `  runs (ready ms / noise cores): ${c.runs.map((r) => `${fmt(r.readyMs, 0)} / ${fmt(r.noiseCores, 2)}`).join(', ')}`,
    );
  }
  const noise = [
    ...(results.toolsCall?.raw ?? []).filter((r) => r.kept).map((r) => r.noiseCores),
    ...(results.upstreamCall?.raw ?? []).filter((r) => r.kept).map((r) => r.noiseCores),
  ].filter(Number.isFinite);
  if (noise.length > 0 && median(noise) > 0.3) {
    out.push(
      '',
      `WARNING: other processes used ${fmt(median(noise), 2)} cores (median per run) while the bench ran; figures are disturbed`,
    );
  }
  out.push('', 'targets');
  out.push(
    table([
      ['metric', 'value', 'target', 'met'],
      ...results.targets.map((t) => [
        t.metric,
        t.value === null ? '-' : `${t.value} ${t.unit}`,
        t.limit === null ? '-' : `${t.op ?? ''} ${t.limit} ${t.unit}`,
        t.met === null
          ? 'n/a'
          : t.met
            ? 'yes'
            : `NO (${t.op === '>=' ? '-' : '+'}${t.overBy} ${t.unit})`,
      ]),
    ]),
  );
  out.push(
    '',
    `id checks: ${results.checks.matched} of ${results.checks.requests} responses matched their own request id; mismatches ${results.checks.mismatches}`,
  );
  out.push(`results: ${OUT}`, '');
  process.stdout.write(`${out.join('\n')}\n`);
}

function printUpstreamCall(out, u) {
  out.push(
    '',
    `upstream tools/call (v1 SDK upstream, stateful session, ${u.answers === 'json' ? 'JSON' : 'SSE'} answers${u.answerBytes ? ` + ${u.answerBytes} bytes` : ''}; gateway ready in ${fmt(u.readyMs, 0)} ms; sessions open on the upstream at the end: ${u.upstreamSessions})`,
    `layout ${u.layout}: ${
      {
        split:
          'wrk alone on core 0 for direct, with the upstream on core 1 for the gateway and the proxy (as toolsCall)',
        'upstream-alone':
          'the upstream alone on core 1 in every run; wrk on core 0, with the gateway or the proxy',
        'load-with-upstream':
          'wrk with the upstream on core 1 in every run; the gateway or the proxy alone on core 0',
      }[u.layout]
    }`,
  );
  const rows = [
    [
      'conns / target',
      'req/s',
      'p50 ms',
      'p99 ms',
      'cpu/req µs',
      'upstream µs',
      'RSS MB',
      'errors',
      'id mism.',
      'noise cores',
      'wrk µs',
      'busy core 0/1 %',
    ],
  ];
  for (const c of UPSTREAM_CONNECTIONS) {
    const e = u[`c${c}`];
    if (!e) continue;
    for (const name of ['direct', 'bareProxy', 'gateway']) {
      const t = e[name];
      rows.push([
        `c${c} ${name}`,
        fmt(t.rps, 0),
        fmt(t.p50Ms, 3),
        fmt(t.p99Ms, 3),
        fmt(t.cpuPerRequestMs * 1000, 1),
        fmt(t.upstreamCpuPerRequestMs * 1000, 1),
        fmt(t.rssMb, 1),
        String(t.errors),
        String(t.idMismatches),
        fmt(t.noiseCores, 2),
        fmt(t.loadCpuPerRequestMs * 1000, 1),
        t.coreBusy.map((x) => fmt(x * 100, 0)).join('/'),
      ]);
    }
  }
  out.push(table(rows));
  const r2 = [
    [
      'conns',
      'req/s gw÷direct',
      'per round',
      'cpu/req gw÷proxy',
      'per round',
      'added p50 vs direct ms',
      'vs proxy ms',
      'proxy added p50 ms',
    ],
  ];
  for (const c of UPSTREAM_CONNECTIONS) {
    const e = u[`c${c}`];
    if (!e) continue;
    r2.push([
      `c${c}`,
      fmt(e.throughputRatioVsDirect, 2),
      e.throughputRatioVsDirectPerRound.map((x) => fmt(x, 2)).join(' '),
      fmt(e.cpuPerRequestRatioVsBareProxy, 2),
      e.cpuPerRequestRatioVsBareProxyPerRound.map((x) => fmt(x, 2)).join(' '),
      fmt(e.addedP50Ms, 3),
      fmt(e.addedP50VsBareProxyMs, 3),
      fmt(e.bareProxyAddedP50Ms, 3),
    ]);
  }
  out.push('', table(r2));
}

function printFanout(out, f) {
  out.push(
    '',
    `fan-out: ${f.upstreams} upstreams (${f.answering} v2 SDK servers × ${f.toolsPerUpstream} tools, era ${f.eras.join('/')}; 1 silent: ${f.straggler.id}, ${f.straggler.status}), listMillis ${f.listMillis}`,
  );
  out.push(
    `refresh round (gateway's histogram): median ${fmt(f.refreshMs, 1)} ms, max ${fmt(f.refreshMaxMs, 1)} ms over ${f.refreshes.length} rounds ` +
      `(${f.refreshes.map((r) => fmt(r.roundMs, 1)).join(' ')}); first round at boot ${fmt(f.bootRoundMs, 1)} ms; ` +
      `trigger → answer ${f.refreshes.map((r) => fmt(r.triggerToAnswerMs, 0)).join(' ')} ms`,
  );
  out.push(
    `tools/list (${f.tools} tools, ${f.toolsListBodyBytes} bytes, 1 connection): p50 ${fmt(f.toolsListP50Ms, 3)} ms, p99 ${fmt(f.toolsListP99Ms, 3)} ms, ` +
      `${fmt(f.toolsListRps, 0)} req/s, cpu/req ${fmt(f.toolsListCpuPerRequestMs * 1000, 1)} µs, errors ${f.toolsListErrors}; statuses ${JSON.stringify(f.statuses)}`,
  );
}

function printModern(out, m) {
  const c = m.toolsCall?.c16;
  if (c)
    out.push(
      '',
      `2026-07-28 tools/call, 16 conns: gateway ${fmt(c.gateway.rps, 0)} req/s, cpu/req ${fmt(c.gateway.cpuPerRequestMs * 1000, 1)} µs; ` +
        `bare proxy ${fmt(c.bareProxy.rps, 0)} req/s, cpu/req ${fmt(c.bareProxy.cpuPerRequestMs * 1000, 1)} µs; ` +
        `ratio ${fmt(c.cpuPerRequestRatioVsBareProxy, 2)} (per round ${c.cpuPerRequestRatioVsBareProxyPerRound.join(' ')})`,
    );
  for (const f of [m.liveFanout?.u10, m.liveFanout?.u10Sdk])
    if (f)
      out.push(
        `2026-07-28 tools/list, ${f.upstreams} lists: live ${f.upstreamKind ?? 'sdk'} upstreams × ${f.toolsPerUpstream} tools, 1 conn: p50 ${fmt(f.p50Ms, 3)} ms, p99 ${fmt(f.p99Ms, 3)} ms; ` +
          `slowest upstream's own p50 ${fmt(f.slowestUpstreamP50Ms, 3)} ms; the ten asked at once directly ${fmt(f.directFanoutP50Ms, 3)} ms; gateway CPU ${fmt(f.cpuPerRequestMs, 3)} ms per list`,
      );
}

function printCapacity(out, c) {
  out.push(
    '',
    `capacity ramp (tools/call at ${c.loadConnections} connections; p99 limit ${c.p99LimitMs} ms = 2× ${c.baselineP99Ms} ms with no stream)`,
  );
  out.push(
    table([
      ['streams', 'RSS MB', 'FDs', 'req/s', 'p99 ms', 'call err', 'refused', 'dropped', 'within'],
      ...c.steps.map((s) => [
        String(s.streams),
        fmt(s.idleRssMb, 1),
        String(s.fds),
        fmt(s.rps, 0),
        fmt(s.p99Ms, 3),
        String(s.callErrors),
        String(s.refused),
        String(s.dropped),
        s.withinLimits ? 'yes' : 'NO',
      ]),
    ]),
  );
  out.push(
    `highest step within limits: ${c.maxWithinLimits} streams, ${c.rssKbPerStream} KB RSS and ${c.fdsPerStream} FDs per stream`,
  );
}
