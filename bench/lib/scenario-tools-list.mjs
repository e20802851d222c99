// toolsList: tools/list at 1 connection against a ready gateway; and starting a checked gateway.
import { CORE_SIDE, CORE_TARGET, SECONDS, WARMUP, log } from './config.mjs';
import { account, measured } from './measure.mjs';
import { rpc, spawnGateway } from './processes.mjs';
import { coldStartRun } from './scenario-cold-start.mjs';
import { fmt, round } from './stats.mjs';

/** tools/list at 1 connection against a ready gateway; bytes is the whole HTTP response. */
export async function toolsListRun(gw, tools) {
  const one = await rpc(gw, 1, 'tools/list');
  const count = one.json?.result?.tools?.length;
  if (count !== tools) throw new Error(`tools/list answered ${count} tools, expected ${tools}`);
  account(
    await measured({
      url: gw.mcpUrl,
      mode: 'list',
      connections: 1,
      seconds: Math.min(WARMUP, 2),
      targetPid: gw.pid,
      loadCore: CORE_SIDE,
    }),
  );
  const r = await measured({
    url: gw.mcpUrl,
    mode: 'list',
    connections: 1,
    seconds: SECONDS,
    targetPid: gw.pid,
    loadCore: CORE_SIDE,
  });
  account(r);
  log(
    `tools/list t=${tools}: p50 ${fmt(r.p50Ms, 3)} ms p99 ${fmt(r.p99Ms, 3)} ms, ${Buffer.byteLength(one.text)} bytes`,
  );
  return {
    tools,
    p50Ms: round(r.p50Ms),
    p99Ms: round(r.p99Ms),
    rps: round(r.rps, 1),
    bodyBytes: Buffer.byteLength(one.text),
    responseBytes: Math.round(r.bytesPerResponse),
    cpuPerRequestMs: round(r.cpuPerRequestMs, 4),
    maxRssMb: round(r.maxRssMb, 1),
    errors: r.errors,
    idMismatches: r.mismatches,
    requests: r.requests,
    noiseCores: round(r.noiseCores, 2),
  };
}

export async function startGatewayFor(ts, catalog, tools, extra = {}) {
  await ts.setCatalog(catalog, tools, 'r1', 'A');
  const gw = await spawnGateway({ core: CORE_TARGET, toolService: ts, catalog, ...extra });
  const cold = await coldStartRun(gw);
  const readyMs = cold.readyMs;
  const check = await rpc(gw, 1, 'tools/call', { name: 'bench.echo', arguments: { nonce: 7 } });
  if (
    !check.json?.result ||
    check.json.result.isError ||
    !check.json.result.content?.[0]?.text?.includes('"nonce":7')
  ) {
    throw new Error(`gateway sanity tools/call failed: ${check.text}\n${gw.output()}`);
  }
  return { gw, readyMs, cold };
}
