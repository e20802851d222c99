// refresh: a 10,000-tool catalog swapped under tools/call load; stalls measured in the gateway.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { CORE_SIDE, SECONDS, log, sleep } from './config.mjs';
import { account, measured } from './measure.mjs';
import { memoryMb } from './proc.mjs';
import { rpc, toolBundles } from './processes.mjs';
import { percentile, round } from './stats.mjs';

/** Sequential tools/call probe from this process; every call is timed with its start time. */
function startProbe(gw) {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 10_000 });
  const samples = [];
  let running = true;
  const done = (async () => {
    for (let id = 1; running && id < 1_000_000; id++) {
      const started = performance.now();
      const res = await request(gw.mcpUrl, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"bench.echo","arguments":{"nonce":${id}}}}`,
      });
      const text = await res.body.text();
      samples.push({
        at: started,
        ms: performance.now() - started,
        ok: text.includes(`"id":${id},`) && text.includes('"result"'),
      });
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      await agent.close();
      return samples;
    },
  };
}

/** Closes a loop-monitor window (SIGUSR2) and returns its figures; the next window starts clean. */
export async function loopWindow(gw, loopFile, expectWindow) {
  gw.child.kill('SIGUSR2');
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      const w = JSON.parse(readFileSync(`${loopFile}.window`, 'utf8'));
      if (w.window >= expectWindow) return w;
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) throw new Error('loop monitor did not answer SIGUSR2');
    await sleep(10);
  }
}

/**
 * The catalog swap: `gw` serves catalog `key` (TOOLS tools, variant A) and was started with the
 * loop monitor. The Tool Service then publishes revision b2 (every description changed) and a
 * tools/call naming a tool that is not in the catalog makes the gateway refresh at once.
 * Two windows of equal length under tools/call at 16 connections: baseline, then with the swap.
 */
export async function scenarioRefresh(ts, gw, key, loopFile, tools) {
  log(`refresh: ${tools}-tool catalog swap under tools/call at 16 connections`);
  let windowNo = 0;
  const seconds = Math.max(SECONDS, 2);
  const triggerAfterMs = Math.min(1000, seconds * 250);

  const window = async (swap) => {
    await loopWindow(gw, loopFile, ++windowNo); // reset: the window starts now
    const probe = startProbe(gw);
    const load = measured({
      url: gw.mcpUrl,
      mode: 'call',
      connections: 16,
      seconds,
      targetPid: gw.pid,
      upstreamPid: ts.pid,
      loadCore: CORE_SIDE,
    });
    let trigger;
    if (swap) {
      await sleep(triggerAfterMs);
      // A name missing from the catalog makes the gateway refresh every source once, then answer.
      const started = performance.now();
      const answer = await rpc(gw, 'swap', 'tools/call', {
        name: 'bench.not-yet-published',
        arguments: {},
      });
      trigger = { started, ended: performance.now(), answer };
    }
    const r = await load;
    account(r);
    const samples = await probe.stop();
    const loop = await loopWindow(gw, loopFile, ++windowNo);
    return { r, samples, loop, trigger };
  };

  const base = await window(false);
  const swapBytes = await ts.setCatalog(key, tools, 'b2', 'B'); // served from now on; pulled on the trigger
  const swap = await window(true);

  const code = swap.trigger.answer.json?.error?.code;
  const view = await toolBundles(gw);
  const bundle = view.bundles.find((b) => b.id === 'bench');
  const listed = await rpc(gw, 2, 'tools/list');
  const swapped =
    bundle?.revision === 'b2' &&
    listed.json?.result?.tools?.length === tools &&
    listed.text.includes('(B).');
  if (!swapped) log(`refresh: WARNING the catalog was not swapped (revision ${bundle?.revision})`);
  const inSwap = swap.samples.filter(
    (s) => s.at + s.ms >= swap.trigger.started && s.at <= swap.trigger.ended,
  );
  const stall = (l) => Math.max(l.maxDelayMs, l.maxGapMs);
  const out = {
    tools,
    manifestBytes: swapBytes,
    swapped,
    triggerErrorCode: code ?? null,
    refreshMs: round(swap.trigger.ended - swap.trigger.started, 1),
    maxEventLoopStallMs: round(stall(swap.loop), 1),
    maxEventLoopDelayMs: round(swap.loop.maxDelayMs, 1),
    maxTimerGapMs: round(swap.loop.maxGapMs, 1),
    baselineMaxEventLoopStallMs: round(stall(base.loop), 1),
    p99Ms: round(swap.r.p99Ms),
    p50Ms: round(swap.r.p50Ms),
    maxMs: round(swap.r.maxMs),
    baselineP99Ms: round(base.r.p99Ms),
    baselineP50Ms: round(base.r.p50Ms),
    baselineMaxMs: round(base.r.maxMs),
    rps: round(swap.r.rps, 1),
    baselineRps: round(base.r.rps, 1),
    probeInSwap: {
      samples: inSwap.length,
      p50Ms: round(
        percentile(
          inSwap.map((s) => s.ms),
          50,
        ),
      ),
      p99Ms: round(
        percentile(
          inSwap.map((s) => s.ms),
          99,
        ),
      ),
      maxMs: round(Math.max(...inSwap.map((s) => s.ms))),
      failed: inSwap.filter((s) => !s.ok).length,
    },
    probeBaseline: {
      samples: base.samples.length,
      p99Ms: round(
        percentile(
          base.samples.map((s) => s.ms),
          99,
        ),
      ),
      maxMs: round(Math.max(...base.samples.map((s) => s.ms))),
    },
    errors: swap.r.errors,
    idMismatches: swap.r.mismatches + base.r.mismatches,
    windowSeconds: seconds,
    rssAfterMb: round(memoryMb(gw.pid).rssMb, 1),
  };
  log(
    `refresh t=${tools}: refresh ${out.refreshMs} ms, max stall ${out.maxEventLoopStallMs} ms (baseline ${out.baselineMaxEventLoopStallMs}), ` +
      `p99 ${out.p99Ms} ms (baseline ${out.baselineP99Ms}), probe p99 in swap ${out.probeInSwap.p99Ms} ms`,
  );
  return out;
}
