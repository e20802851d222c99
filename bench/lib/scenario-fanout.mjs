// fanout: one gateway in front of 50 upstream MCP servers, one of which never answers (it
// accepts the TCP connection and stays silent). Measures the duration of a refresh round,
// which the straggler bounds at its `timeouts.listMillis`, and tools/list of the merged
// catalog at 1 connection.
import { CORE_SIDE, CORE_TARGET, SECONDS, WARMUP, int, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { rpc, spawnGateway, startFanoutUpstreams, waitReady } from './processes.mjs';
import { fmt, median, round } from './stats.mjs';

const UPSTREAMS = int('BENCH_FANOUT_UPSTREAMS', 50);
const TOOLS = int('BENCH_FANOUT_TOOLS', 5);
const LIST_MILLIS = int('BENCH_FANOUT_LIST_MILLIS', 1000);
const REFRESHES = int('BENCH_FANOUT_REFRESHES', 5);
const HISTOGRAM = 'mcp_gateway_refresh_round_duration_seconds';

/**
 * The gateway's own refresh-round histogram (GET /actuator/prometheus): `sum` in seconds and
 * `count` of rounds. The gateway times a round with performance.now() from the start of the
 * pulls to the catalog applied (BundleRefreshService.runRound), so the difference of two
 * readings around one round is that round's duration, to the microsecond.
 */
async function roundHistogram(gw) {
  const res = await fetch(`${gw.managementUrl}/actuator/prometheus`);
  const text = await res.text();
  const read = (suffix) =>
    Number(new RegExp(`^${HISTOGRAM}_${suffix}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
  return { sum: read('sum'), count: read('count') };
}

export async function scenarioFanout() {
  const answering = UPSTREAMS - 1;
  const fan = await startFanoutUpstreams({
    core: CORE_SIDE,
    servers: answering,
    tools: TOOLS,
    silent: 1,
  });
  let gw;
  try {
    // The straggler sits in the middle of the list, not first or last.
    const urls = [...fan.servers];
    const stragglerIndex = Math.floor(urls.length / 2);
    urls.splice(stragglerIndex, 0, fan.silent[0]);
    const ids = urls.map((_, i) => `u${String(i).padStart(2, '0')}`);
    const stragglerId = ids[stragglerIndex];
    gw = await spawnGateway({
      core: CORE_TARGET,
      mcp: {
        identity: 'bench',
        registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
        // 245 tools: above the default maxToolsTotal (200), which would reject the aggregate
        discovery: { enabled: true, maxToolsTotal: 10000 },
        upstreams: urls.map((url, i) => ({
          id: ids[i],
          url,
          timeouts: { listMillis: LIST_MILLIS },
        })),
      },
    });
    const readyMs = await waitReady(gw);
    const boot = await roundHistogram(gw);
    const upstreamsView = async () =>
      (await (await fetch(`${gw.managementUrl}/actuator/upstreams`)).json()).upstreams;
    const countStatuses = (list) => {
      const out = {};
      for (const u of list) out[u.status] = (out[u.status] ?? 0) + 1;
      return out;
    };
    const bootStatuses = countStatuses(await upstreamsView());
    // A triggered round: a tools/call naming no catalog tool makes the gateway run one round
    // over every source (contract §8) and answer -32001 after it.
    const trigger = (id) =>
      rpc(gw, id, 'tools/call', { name: 'fanout.not-published', arguments: {} });
    // Should a cold first round have missed some of the answering servers (a loaded machine),
    // more rounds until all of them are served, before anything is measured (at most 5).
    let warmUpRounds = 0;
    while ((countStatuses(await upstreamsView()).healthy ?? 0) < answering && warmUpRounds < 5) {
      await trigger(`warm-up-${++warmUpRounds}`);
    }
    const view = await upstreamsView();
    const statuses = countStatuses(view);
    const straggler = view.find((u) => u.id === stragglerId);
    const eras = [...new Set(view.map((u) => u.era).filter(Boolean))];
    const listed = await rpc(gw, 1, 'tools/list');
    const tools = listed.json?.result?.tools?.length;
    const partial = listed.json?.result?._meta?.['io.github.mcp-gateway/partialSources'] ?? [];
    if (tools !== answering * TOOLS)
      throw new Error(
        `fanout: tools/list answered ${tools} tools, expected ${answering * TOOLS}; statuses ${JSON.stringify(statuses)}`,
      );
    log(
      `fanout: ${UPSTREAMS} upstreams (${answering} v2 SDK servers × ${TOOLS} tools + 1 silent, listMillis ${LIST_MILLIS}); ` +
        `ready in ${fmt(readyMs, 0)} ms, first round ${fmt(boot.sum * 1000, 1)} ms (statuses ${JSON.stringify(bootStatuses)}); ` +
        `${warmUpRounds} warm-up rounds; statuses ${JSON.stringify(statuses)}`,
    );

    // The measured refresh rounds, one at a time.
    const rounds = [];
    for (let i = 0; i < REFRESHES; i++) {
      const before = await roundHistogram(gw);
      const started = performance.now();
      const answer = await trigger(`refresh-${i}`);
      const triggerMs = performance.now() - started;
      const after = await roundHistogram(gw);
      const count = after.count - before.count;
      const roundMs = count > 0 ? ((after.sum - before.sum) * 1000) / count : NaN;
      rounds.push({
        roundMs: round(roundMs, 1),
        triggerToAnswerMs: round(triggerMs, 1),
        rounds: count,
        answerCode: answer.json?.error?.code ?? null,
      });
      log(
        `fanout refresh ${i + 1}/${REFRESHES}: round ${fmt(roundMs, 1)} ms (gateway histogram), trigger → answer ${fmt(triggerMs, 1)} ms (${answer.json?.error?.code})`,
      );
    }

    // tools/list of the merged catalog at 1 connection, after a short warm-up.
    const listLoad = { url: gw.mcpUrl, mode: 'list', connections: 1, targetPid: gw.pid };
    account(await measured({ ...listLoad, seconds: Math.min(WARMUP, 2), loadCore: CORE_SIDE }));
    const r = await measured({ ...listLoad, seconds: SECONDS, loadCore: CORE_SIDE });
    account(r);
    log(
      `fanout tools/list (${tools} tools): p50 ${fmt(r.p50Ms, 3)} ms p99 ${fmt(r.p99Ms, 3)} ms, ${Buffer.byteLength(listed.text)} bytes`,
    );
    const roundTimes = rounds.map((x) => x.roundMs);
    return {
      u50: {
        upstreams: UPSTREAMS,
        answering,
        toolsPerUpstream: TOOLS,
        listMillis: LIST_MILLIS,
        eras,
        statuses,
        straggler: {
          id: stragglerId,
          status: straggler?.status ?? null,
          lastErrorType: straggler?.lastErrorType ?? null,
          listedAsPartial: partial.some((p) => p.id === stragglerId),
        },
        readyMs: round(readyMs, 0),
        bootRoundMs: round(boot.count === 1 ? boot.sum * 1000 : NaN, 1),
        bootStatuses,
        warmUpRounds,
        refreshMs: round(median(roundTimes), 1),
        refreshMaxMs: round(Math.max(...roundTimes), 1),
        refreshOverListMillisMs: round(median(roundTimes) - LIST_MILLIS, 1),
        refreshes: rounds,
        tools,
        toolsListP50Ms: round(r.p50Ms),
        toolsListP99Ms: round(r.p99Ms),
        toolsListRps: round(r.rps, 1),
        toolsListBodyBytes: Buffer.byteLength(listed.text),
        toolsListCpuPerRequestMs: round(r.cpuPerRequestMs, 4),
        toolsListErrors: r.errors,
        toolsListIdMismatches: r.mismatches,
        noiseCores: round(r.noiseCores, 2),
        rssMb: round(r.maxRssMb, 1),
      },
    };
  } finally {
    await gw?.stop();
    await fan.stop();
  }
}
