// modern: the 2026-07-28 path (docs/operations.md §11), two parts.
//   toolsCall  tools/call by a 2026-07-28 client (stateless: the `_meta` envelope in params,
//              MCP-Protocol-Version / Mcp-Method / Mcp-Name headers; wrk mode modern-call)
//              through the gateway to the bench Tool Service, beside the bare proxy in the same
//              rounds at 16 connections: the shape of the 2025 toolsCall scenario, each of the
//              two as BENCH_REPLICAS processes (default 2; bench/lib/replicas.mjs).
//              Key modern.toolsCall.c16.cpuPerRequestRatioVsBareProxy (target <= 2): the ratio
//              of the medians of the kept runs of all processes of each.
//   liveFanout tools/list by a 2026-07-28 client (wrk mode modern-list, 1 connection) through a
//              gateway whose ten upstreams (BENCH_MODERN_TOOLS tools each, one process each) are
//              all `lists: live`: every request fans out to the ten and merges
//              (docs/operations.md §11 "Live lists"). Each upstream's own tools/list p50 is
//              measured first, directly, the same way, then the ten asked at once by the bench
//              itself (directFanoutP50Ms: the floor on this machine). Twice:
//              u10     replaying upstreams (mcp-replay.mjs: a v2 SDK server's answers recorded
//                      at start and served as they were), so the time is the gateway's;
//                      key modern.liveFanout.u10.p50Ms (target <= the slowest upstream's own
//                      p50 + 3 ms, printed as slowestUpstreamP50Ms);
//              u10Sdk  ten v2 SDK servers answering afresh (about 1.2 ms of CPU each): on a
//                      2-core machine their CPU, not the gateway, sets the time (recorded,
//                      no target; docs/benchmarks.md).
import { CORE_SIDE, CORE_TARGET, ROUNDS, SECONDS, WARMUP, int, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import {
  spawnGateway,
  startBareProxy,
  startFanoutUpstreams,
  startReplayUpstream,
  waitReady,
} from './processes.mjs';
import {
  REPLICAS,
  perRoundCpuRatio,
  pooledFigures,
  rawRuns,
  replicatedRounds,
} from './replicas.mjs';
import { startGatewayFor } from './scenario-tools-list.mjs';
import { fmt, median, round } from './stats.mjs';

const LIVE_UPSTREAMS = 10;
const TOOLS = int('BENCH_MODERN_TOOLS', 5);
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
};

/** One 2026-07-28 request by fetch (the sanity checks before any load). */
async function modernRpc(url, method, params, name) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } }),
  });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text);
  return { status: res.status, text, json: JSON.parse(data ? data[1] : text) };
}

const figures = (r) => ({
  rps: round(r.rps, 1),
  p50Ms: round(r.p50Ms),
  p99Ms: round(r.p99Ms),
  cpuPerRequestMs: round(r.cpuPerRequestMs, 5),
  errors: r.errors,
});

async function modernToolsCall(ts) {
  const gateways = [];
  const proxies = [];
  try {
    const targets = { bareProxy: [], gateway: [] };
    for (let i = 0; i < REPLICAS; i++) {
      const { gw } = await startGatewayFor(ts, 't10', 10, {
        mcpExtra: { http: { modernEra: true } },
      });
      gateways.push(gw);
      const check = await modernRpc(
        gw.mcpUrl,
        'tools/call',
        { name: 'bench.echo', arguments: { nonce: 7 } },
        'bench.echo',
      );
      if (
        check.json?.result?.resultType !== 'complete' ||
        !check.json.result.content?.[0]?.text?.includes('"nonce":7')
      )
        throw new Error(`modern tools/call sanity check failed: ${check.status} ${check.text}`);
      targets.gateway.push({
        url: gw.mcpUrl,
        mode: 'modern-call',
        targetPid: gw.pid,
        upstreamPid: ts.pid,
        loadCore: CORE_SIDE,
      });
      const proxy = await startBareProxy({ core: CORE_TARGET, upstream: ts.url });
      proxies.push(proxy);
      targets.bareProxy.push({
        url: `http://127.0.0.1:${proxy.port}/mcp/bench.echo`,
        mode: 'rest',
        targetPid: proxy.pid,
        upstreamPid: ts.pid,
        loadCore: CORE_SIDE,
      });
    }
    for (const list of Object.values(targets))
      for (const target of list)
        account(await measured({ ...target, connections: 16, seconds: WARMUP }));
    const raw = await replicatedRounds({
      configurations: targets,
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: 16,
      label: 'modern c=16',
    });
    const gateway = pooledFigures(raw, 'gateway');
    const bareProxy = pooledFigures(raw, 'bareProxy');
    return {
      c16: {
        gateway,
        bareProxy,
        cpuPerRequestRatioVsBareProxy: round(
          gateway.cpuPerRequestMs / bareProxy.cpuPerRequestMs,
          2,
        ),
        cpuPerRequestRatioVsBareProxyPerRound: perRoundCpuRatio(raw, 'gateway', 'bareProxy'),
      },
      raw: rawRuns(raw),
    };
  } finally {
    for (const proxy of proxies) await proxy.stop();
    for (const gw of gateways) await gw.stop();
  }
}

/**
 * Ten upstreams, one process each, started at once, all on the side core: no upstream waits
 * for another's JavaScript to finish (they were one process before, so the ten answers were
 * computed one after another). `replay`: bench/lib/mcp-replay.mjs (the SDK servers' recorded
 * answers, next to no CPU); `sdk`: bench/lib/mcp-fanout.mjs with one v2 SDK server each.
 */
async function startLiveUpstreams(kind) {
  const started = await Promise.allSettled(
    Array.from({ length: LIVE_UPSTREAMS }, (_, i) =>
      kind === 'replay'
        ? startReplayUpstream({ core: CORE_SIDE, server: i, tools: TOOLS })
        : startFanoutUpstreams({ core: CORE_SIDE, servers: 1, tools: TOOLS, silent: 0 }),
    ),
  );
  const procs = started.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const stop = () => Promise.all(procs.map((p) => p.stop()));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { servers: procs.map((p) => p.servers[0]), pids: procs.map((p) => p.pid), stop };
}

/**
 * The floor a client could reach by itself: the ten upstreams asked at once by this process
 * (fetch, one keep-alive connection each), the time until the last answer, `seconds` long.
 */
async function directFanout(urls, seconds) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { _meta: ENVELOPE },
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/list',
  };
  const one = async (url) => {
    const res = await fetch(url, { method: 'POST', headers, body });
    const text = await res.text();
    if (res.status !== 200 || !text.includes('"tools"'))
      throw new Error(`direct tools/list failed: ${res.status} ${text.slice(0, 200)}`);
  };
  const times = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    await Promise.all(urls.map(one));
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { requests: times.length, p50Ms: times[Math.floor(times.length / 2)] };
}

async function modernLiveFanout(kind) {
  const fan = await startLiveUpstreams(kind);
  let gw;
  try {
    // Each upstream's own tools/list, by the same 2026 request at 1 connection.
    const own = [];
    for (const [i, url] of fan.servers.entries()) {
      account(
        await measured({
          url,
          mode: 'modern-list',
          connections: 1,
          seconds: 1,
          targetPid: fan.pids[i],
          upstreamPids: fan.pids,
          loadCore: CORE_TARGET,
        }),
      );
      const r = await measured({
        url,
        mode: 'modern-list',
        connections: 1,
        seconds: Math.max(1, Math.min(SECONDS, 3)),
        targetPid: fan.pids[i],
        upstreamPids: fan.pids,
        loadCore: CORE_TARGET,
      });
      account(r);
      own.push(figures(r));
    }
    await directFanout(fan.servers, 1);
    const direct = await directFanout(fan.servers, Math.max(1, Math.min(SECONDS, 3)));
    const slowest = Math.max(...own.map((o) => o.p50Ms));
    gw = await spawnGateway({
      core: CORE_TARGET,
      mcp: {
        identity: 'bench',
        registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        discovery: { enabled: true, maxToolsTotal: 10000 },
        http: { modernEra: true },
        upstreams: fan.servers.map((url, i) => ({ id: `u${i}`, url, lists: 'live' })),
      },
    });
    await waitReady(gw);
    const check = await modernRpc(gw.mcpUrl, 'tools/list', {});
    const tools = check.json?.result?.tools?.length;
    if (
      tools !== LIVE_UPSTREAMS * TOOLS ||
      check.json.result._meta?.['io.github.mcp-gateway/partialSources']
    )
      throw new Error(
        `modern live tools/list sanity check failed: ${check.status} ${check.text.slice(0, 500)}`,
      );
    const load = {
      url: gw.mcpUrl,
      mode: 'modern-list',
      connections: 1,
      targetPid: gw.pid,
      upstreamPids: fan.pids,
      loadCore: CORE_SIDE,
    };
    account(await measured({ ...load, seconds: Math.min(WARMUP, 2) }));
    const r = await measured({ ...load, seconds: SECONDS });
    account(r);
    log(
      `modern live fan-out (${LIVE_UPSTREAMS} live ${kind} upstreams × ${TOOLS} tools): tools/list p50 ${fmt(r.p50Ms, 3)} ms p99 ${fmt(r.p99Ms, 3)} ms; ` +
        `slowest upstream's own p50 ${fmt(slowest, 3)} ms (each: ${own.map((o) => fmt(o.p50Ms, 3)).join(' ')}); ` +
        `the ten asked at once directly: p50 ${fmt(direct.p50Ms, 3)} ms; gateway CPU ${fmt(r.cpuPerRequestMs, 3)} ms per list, noise ${fmt(r.noiseCores, 2)} cores`,
    );
    return {
      [kind === 'replay' ? 'u10' : 'u10Sdk']: {
        upstreamKind: kind,
        upstreams: LIVE_UPSTREAMS,
        toolsPerUpstream: TOOLS,
        tools,
        p50Ms: round(r.p50Ms),
        p99Ms: round(r.p99Ms),
        rps: round(r.rps, 1),
        cpuPerRequestMs: round(r.cpuPerRequestMs, 5),
        errors: r.errors,
        slowestUpstreamP50Ms: slowest,
        directFanoutP50Ms: round(direct.p50Ms),
        upstreamCpuPerRequestMs: round(r.upstreamCpuPerRequestMs, 5),
        noiseCores: round(r.noiseCores, 2),
        upstreamOwn: own,
      },
    };
  } finally {
    await gw?.stop();
    await fan.stop();
  }
}

/** BENCH_SCENARIOS=modern: both parts; `ts` is the bench Tool Service. */
export async function scenarioModern(ts) {
  const toolsCall = await modernToolsCall(ts);
  // the key: upstreams whose answers cost next to nothing, so the figure is the gateway's;
  // then the same with ten v2 SDK servers, whose CPU sets the time on a small machine
  const liveFanout = { ...(await modernLiveFanout('replay')), ...(await modernLiveFanout('sdk')) };
  return { toolsCall, liveFanout };
}
