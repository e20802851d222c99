// upstreamCall: tools/call of an upstream MCP server's tool (v1 SDK, stateful session, SSE
// answers) through the gateway, against the same server called directly and through the bare
// proxy, at 1 and 16 connections (BENCH_UPSTREAM_CONNECTIONS), alternating rounds.
import { CORE_SIDE, CORE_TARGET, ROUNDS, SECONDS, WARMUP, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { rpc, spawnGateway, startBareProxy, startMcpUpstream, waitReady } from './processes.mjs';
import { fmt, median, round } from './stats.mjs';

export const UPSTREAM_CONNECTIONS = (process.env.BENCH_UPSTREAM_CONNECTIONS ?? '1,16')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
/** BENCH_UPSTREAM_JSON=1: the upstream answers JSON (`enableJsonResponse: true`) instead of SSE. */
const JSON_ANSWERS = process.env.BENCH_UPSTREAM_JSON === '1';
/** BENCH_UPSTREAM_ANSWER_BYTES=N: every echo answer carries N more bytes (a second text item). */
const ANSWER_BYTES = Math.max(0, Number(process.env.BENCH_UPSTREAM_ANSWER_BYTES) || 0);
const PROTOCOL = '2025-11-25';

/**
 * BENCH_UPSTREAM_LAYOUT, where the load generator runs (with pinning; the gateway and the
 * proxy are always on CORE_TARGET, the upstream on CORE_SIDE):
 *   upstream-alone (default)  always on CORE_TARGET: the upstream has its core to itself in
 *                    every run, and wrk shares the gateway's or the proxy's. The key this
 *                    scenario exists for, throughputRatioVsDirect, asks how much of an
 *                    upstream's throughput is left behind the hop; with three processes on two
 *                    cores only this layout gives the upstream the same CPU in all three runs,
 *                    and it charges wrk's CPU to the hop's core, against the gateway.
 *   split            as in toolsCall: on the core the measured process is not on, i.e. with
 *                    the upstream for the gateway and the proxy, alone for direct (the default
 *                    until 2026-12-01: the upstream lost a quarter of its core to wrk behind
 *                    any hop, so even the bare proxy read 0.63-0.76 of direct)
 *   load-with-upstream  always on CORE_SIDE: direct shares the upstream's core as well
 */
export const UPSTREAM_LAYOUT = process.env.BENCH_UPSTREAM_LAYOUT ?? 'upstream-alone';
if (!['split', 'upstream-alone', 'load-with-upstream'].includes(UPSTREAM_LAYOUT))
  throw new Error(`BENCH_UPSTREAM_LAYOUT: unknown layout ${UPSTREAM_LAYOUT}`);
const LOAD_CORE_DIRECT = UPSTREAM_LAYOUT === 'load-with-upstream' ? CORE_SIDE : CORE_TARGET;
const LOAD_CORE_PROXIED = UPSTREAM_LAYOUT === 'upstream-alone' ? CORE_TARGET : CORE_SIDE;

/**
 * Opens a 2025 session on an MCP endpoint the way a client does: initialize, then
 * notifications/initialized, each with `extraHeaders` (e.g. a caller's Authorization). Returns
 * the headers every later request of the session carries.
 */
export async function openSession(url, extraHeaders = {}) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extraHeaders,
  };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'mcp-gateway-bench', version: '1.0.0' },
      },
    }),
  });
  const text = await init.text();
  const sessionId = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !sessionId || !text.includes('"protocolVersion"'))
    throw new Error(`initialize on ${url} failed: ${init.status} ${text}`);
  const version = /"protocolVersion":"([^"]+)"/.exec(text)[1];
  const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': version };
  const ack = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...session },
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await ack.arrayBuffer();
  if (ack.status !== 202) throw new Error(`notifications/initialized on ${url}: ${ack.status}`);
  return session;
}

async function closeSession(url, session) {
  try {
    const res = await fetch(url, { method: 'DELETE', headers: session });
    await res.arrayBuffer();
  } catch {
    // the upstream is going away anyway
  }
}

async function openSessions(upstream) {
  const res = await fetch(`http://127.0.0.1:${upstream.port}/__bench/sessions`);
  return (await res.json()).sessions;
}

export async function scenarioUpstreamCall() {
  const upstream = await startMcpUpstream({
    core: CORE_SIDE,
    json: JSON_ANSWERS,
    answerBytes: ANSWER_BYTES,
  });
  let proxy;
  let gw;
  const sessions = [];
  try {
    proxy = await startBareProxy({ core: CORE_TARGET, upstream: upstream.url });
    gw = await spawnGateway({
      core: CORE_TARGET,
      mcp: {
        identity: 'bench',
        registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        discovery: { enabled: true },
        upstreams: [{ id: 'up', url: upstream.url }],
      },
    });
    const readyMs = await waitReady(gw);
    const check = await rpc(gw, 1, 'tools/call', { name: 'up__echo', arguments: { nonce: 7 } });
    if (!check.json?.result?.content?.[0]?.text?.includes('"nonce":7'))
      throw new Error(`gateway sanity tools/call failed: ${check.text}\n${gw.output()}`);
    const proxyUrl = `http://127.0.0.1:${proxy.port}/mcp`;
    const direct = await openSession(upstream.url);
    sessions.push([upstream.url, direct]);
    const viaProxy = await openSession(proxyUrl);
    sessions.push([proxyUrl, viaProxy]);
    log(
      `upstreamCall: v1 SDK upstream (${upstream.answers} answers), gateway ready in ${fmt(readyMs, 0)} ms; ` +
        `direct and proxy sessions ${direct['mcp-session-id'].slice(0, 8)}… ${viaProxy['mcp-session-id'].slice(0, 8)}…`,
    );
    const targets = {
      direct: {
        url: upstream.url,
        mode: 'mcp',
        tool: 'echo',
        headers: direct,
        targetPid: upstream.pid,
        loadCore: LOAD_CORE_DIRECT,
      },
      bareProxy: {
        url: proxyUrl,
        mode: 'mcp',
        tool: 'echo',
        headers: viaProxy,
        targetPid: proxy.pid,
        upstreamPid: upstream.pid,
        loadCore: LOAD_CORE_PROXIED,
      },
      gateway: {
        url: gw.mcpUrl,
        mode: 'mcp',
        tool: 'up__echo',
        targetPid: gw.pid,
        upstreamPid: upstream.pid,
        loadCore: LOAD_CORE_PROXIED,
      },
    };
    const names = Object.keys(targets);
    log(`upstreamCall warm-up: ${WARMUP} s per target at 16 connections`);
    for (const name of names)
      account(await measured({ ...targets[name], connections: 16, seconds: WARMUP }));

    const raw = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [ci, c] of UPSTREAM_CONNECTIONS.entries()) {
        const shift = (r + ci) % names.length;
        const order = [...names.slice(shift), ...names.slice(0, shift)];
        for (const name of order) {
          const m = await measured({ ...targets[name], connections: c, seconds: SECONDS });
          account(m);
          raw.push({
            round: r + 1,
            connections: c,
            target: name,
            kept: r > 0 || ROUNDS === 1,
            ...m,
          });
          log(
            `upstream round ${r + 1}/${ROUNDS} c=${c} ${name.padEnd(9)} ${fmt(m.rps, 0)} req/s p50 ${fmt(m.p50Ms, 3)} ms ` +
              `p99 ${fmt(m.p99Ms, 3)} ms cpu/req ${fmt(m.cpuPerRequestMs * 1000, 1)} µs err ${m.errors} idMismatch ${m.mismatches} ` +
              `cores busy ${m.coreBusy.map((x) => fmt(x * 100, 0)).join('/')} %`,
          );
        }
      }
    }
    // The gateway holds one session; with the bench's two, the upstream has three open.
    const upstreamSessions = await openSessions(upstream);
    return {
      ...summarise(raw),
      answers: upstream.answers,
      layout: UPSTREAM_LAYOUT,
      answerBytes: ANSWER_BYTES,
      readyMs: round(readyMs, 0),
      upstreamSessions,
    };
  } finally {
    for (const [url, session] of sessions) await closeSession(url, session);
    await gw?.stop();
    await proxy?.stop();
    await upstream.stop();
  }
}

function summarise(raw) {
  const out = {};
  for (const c of UPSTREAM_CONNECTIONS) {
    const entry = {};
    for (const name of ['direct', 'bareProxy', 'gateway']) {
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
        /** Median busy share of each core (the upstream's, the target's, wrk's and the noise). */
        coreBusy: [0, 1].map((i) => round(median(runs.map((r) => r.coreBusy[i] ?? NaN)), 2)),
        loadCpuPerRequestMs: round(median(runs.map((r) => r.loadCpuPerRequestMs)), 5),
      };
    }
    // `field` of `target` ÷ that of `reference`, round by round (same minutes).
    const perRound = (field, target, reference) =>
      raw
        .filter((r) => r.connections === c && r.kept && r.target === target)
        .map((g) => {
          const p = raw.find(
            (r) => r.connections === c && r.round === g.round && r.target === reference,
          );
          return round(p ? g[field] / p[field] : NaN, 2);
        });
    const { gateway: g, bareProxy: p, direct: d } = entry;
    out[`c${c}`] = {
      ...entry,
      throughputRatioVsDirect: round(g.rps / d.rps, 2),
      throughputRatioVsDirectPerRound: perRound('rps', 'gateway', 'direct'),
      throughputRatioVsBareProxy: round(g.rps / p.rps, 2),
      cpuPerRequestRatioVsBareProxy: round(g.cpuPerRequestMs / p.cpuPerRequestMs, 2),
      cpuPerRequestRatioVsBareProxyPerRound: perRound('cpuPerRequestMs', 'gateway', 'bareProxy'),
      addedP50Ms: round(g.p50Ms - d.p50Ms),
      addedP50VsBareProxyMs: round(g.p50Ms - p.p50Ms),
      bareProxyAddedP50Ms: round(p.p50Ms - d.p50Ms),
      addedP99Ms: round(g.p99Ms - d.p99Ms),
    };
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
    maxRssMb: round(r.maxRssMb, 1),
    noiseCores: round(r.noiseCores, 2),
    coreBusy: r.coreBusy.map((x) => round(x, 2)),
    loadCpuPerRequestMs: round(r.loadCpuPerRequestMs, 5),
  }));
  return out;
}
