// overload: what the gateway does when Tool Services answer big, or hostile (docs/operations.md §1
// `execution.*` and §2 "Calls nobody waits for"), with the chart's runtime settings and the default
// execution limits.
//
//   bigAnswers   40 concurrent tools/call of a tool answering ~7 MB of JSON, 3 rounds: the
//                gateway's max RSS (sampled every 50 ms), calls served and answered "busy".
//   deepAnswers  10 concurrent tools/call of a tool answering 6 MB of nested brackets, 3 rounds,
//                under the loop monitor: the longest event-loop stall meanwhile.
//   stalledStreams  ten listen clients that stop reading while an upstream sends ~1,000
//                notifications/s (bench/lib/scenario-stalled-streams.mjs): RSS, streams closed.
//   hugeUpstreamList  an upstream listing 40,000 tools (about 5 MB), three refresh rounds:
//                the longest event-loop stall and max RSS (bench/lib/scenario-huge-list.mjs).
//   listChangedStorm  an upstream sending 100 tools/list_changed 10 ms apart: pulls of it and
//                of every other source (bench/lib/scenario-storm.mjs).
//   templateCoverage  10,000 resource templates and 10,000 resources of a later upstream
//                under one literal prefix, three publishing rounds: the median round and the
//                longest event-loop stall (bench/lib/scenario-template-coverage.mjs).
// BENCH_OVERLOAD_PARTS (default "deep,big,streams,hugeList,storm,templateCoverage") picks the parts, e.g.
// BENCH_SCENARIOS=overload BENCH_OVERLOAD_PARTS=deep to re-measure the deep-answer stall alone.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CORE_TARGET, log } from './config.mjs';
import { cpuMs, machineCpuMs, sampleRss } from './proc.mjs';
import {
  GATEWAY_RUNTIME_ENV,
  LOOP_MONITOR,
  benchTempDir,
  spawnGateway,
  waitReady,
} from './processes.mjs';
import { hugeUpstreamList } from './scenario-huge-list.mjs';
import { loopWindow } from './scenario-refresh.mjs';
import { stalledStreams } from './scenario-stalled-streams.mjs';
import { listChangedStorm } from './scenario-storm.mjs';
import { templateCoverage } from './scenario-template-coverage.mjs';
import { round } from './stats.mjs';

const BIG_BYTES = 7 * 1024 * 1024;
const DEEP_LEVELS = 3 * 1024 * 1024; // 6 MB of brackets

/** A Tool Service in this process: bench.big (~7 MB of JSON) and bench.deep (nested brackets). */
async function startHostileToolService() {
  const row = '{"id":123456,"name":"a record of the overload bench","tags":["x","y","z"]},';
  const rows = Math.floor(BIG_BYTES / row.length);
  const big = Buffer.from(`[${row.repeat(rows).slice(0, -1)}]`);
  const deep = Buffer.from(`${'['.repeat(DEEP_LEVELS)}1${']'.repeat(DEEP_LEVELS)}`);
  const manifest = Buffer.from(
    JSON.stringify({
      bundleId: 'bench',
      revision: 'overload',
      tools: ['bench.echo', 'bench.big', 'bench.deep'].map((name) => ({
        name,
        description: `Overload bench tool ${name}.`,
        inputSchema: { type: 'object' },
        _meta: { version: '1' },
      })),
    }),
  );
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '';
      const body = url.startsWith('/tool-manifest')
        ? manifest
        : url === '/mcp/bench.big'
          ? big
          : url === '/mcp/bench.deep'
            ? deep
            : Buffer.from('{}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function call(gw, id, name) {
  const res = await fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: {} },
    }),
  });
  const text = await res.text();
  if (text.includes('the gateway is busy')) return 'busy';
  if (text.includes('"isError":true')) return 'error';
  return res.status === 200 ? 'served' : 'error';
}

/** `rounds` rounds of `concurrency` concurrent calls of `name`; outcome counts. */
async function rounds(gw, name, concurrency, count) {
  const outcomes = { served: 0, busy: 0, error: 0 };
  let id = 0;
  for (let r = 0; r < count; r++) {
    const answers = await Promise.all(
      Array.from({ length: concurrency }, () => call(gw, ++id, name)),
    );
    for (const a of answers) outcomes[a]++;
  }
  return outcomes;
}

/**
 * The gateway as the chart deploys it by default: the runtime settings plus the heap limit the
 * chart derives from its 512Mi memory limit (gateway.heapPercentOfMemoryLimit: 50).
 */
const CHART_NODE_OPTIONS =
  `${GATEWAY_RUNTIME_ENV.NODE_OPTIONS ?? ''} --max-old-space-size=256`.trim();

async function startGateway(ts, loopFile) {
  const gw = await spawnGateway({
    core: CORE_TARGET,
    toolService: ts,
    catalog: 'overload',
    nodeArgs: loopFile === undefined ? [] : ['--require', LOOP_MONITOR],
    env: {
      NODE_OPTIONS: CHART_NODE_OPTIONS,
      ...(loopFile === undefined ? {} : { BENCH_LOOP_FILE: loopFile }),
    },
  });
  await waitReady(gw);
  return gw;
}

/**
 * The parts BENCH_OVERLOAD_PARTS names ("deep", "big", "streams", "hugeList", "storm",
 * "templateCoverage"; all by default).
 */
export const OVERLOAD_PARTS = new Set(
  (process.env.BENCH_OVERLOAD_PARTS ?? 'deep,big,streams,hugeList,storm,templateCoverage')
    .split(',')
    .map((p) => p.trim()),
);

export async function scenarioOverload() {
  const ts = await startHostileToolService();
  try {
    // Each part on a fresh gateway, so the garbage of one does not land in the other's figures.
    const result = { nodeOptions: CHART_NODE_OPTIONS };
    if (OVERLOAD_PARTS.has('deep')) result.deepAnswers = await deepAnswers(ts);
    if (OVERLOAD_PARTS.has('big')) result.bigAnswers = await bigAnswers(ts);
    if (OVERLOAD_PARTS.has('streams'))
      result.stalledStreams = await stalledStreams(ts, CHART_NODE_OPTIONS);
    if (OVERLOAD_PARTS.has('hugeList'))
      result.hugeUpstreamList = await hugeUpstreamList(CHART_NODE_OPTIONS);
    if (OVERLOAD_PARTS.has('storm')) result.listChangedStorm = await listChangedStorm();
    if (OVERLOAD_PARTS.has('templateCoverage'))
      result.templateCoverage = await templateCoverage(CHART_NODE_OPTIONS);
    return result;
  } finally {
    await ts.close();
  }
}

/** 10 concurrent 6 MB nested-bracket answers, 3 rounds, under the loop monitor. */
async function deepAnswers(ts) {
  const loopFile = join(benchTempDir('loop-overload'), 'loop.json');
  const gw = await startGateway(ts, loopFile);
  try {
    await loopWindow(gw, loopFile, 1); // the window starts clean
    // CPU of other processes meanwhile (the bench process is the Tool Service and the client)
    const before = {
      at: performance.now(),
      machine: machineCpuMs().busyMs,
      gw: cpuMs(gw.pid),
      self: cpuMs(process.pid),
    };
    const deep = await rounds(gw, 'bench.deep', 10, 3);
    const windowMs = performance.now() - before.at;
    const otherMs =
      machineCpuMs().busyMs -
      before.machine -
      (cpuMs(gw.pid) - before.gw) -
      (cpuMs(process.pid) - before.self);
    const loop = await loopWindow(gw, loopFile, 2);
    const stall = Math.max(loop.maxDelayMs, loop.maxGapMs);
    const noiseCores = Math.max(0, otherMs) / windowMs;
    log(
      `overload deepAnswers c10 x3: longest event-loop stall ${round(stall, 1)} ms ` +
        `(refused ${deep.error}, served ${deep.served}, busy ${deep.busy}; ` +
        `${round(windowMs, 0)} ms, other processes ${round(noiseCores, 2)} cores)`,
    );
    return {
      maxEventLoopStallMs: round(stall, 1),
      windowMs: round(windowMs, 0),
      noiseCores: round(noiseCores, 2),
      answerBytes: 2 * DEEP_LEVELS + 1,
      calls: 30,
      ...deep,
    };
  } finally {
    gw.child.kill('SIGTERM');
  }
}

/** 40 concurrent ~7 MB answers, 3 rounds: the gateway's max RSS. */
async function bigAnswers(ts) {
  const gw = await startGateway(ts);
  try {
    const idleRss = sampleRss([gw.pid]).stop().get(gw.pid);
    const sampler = sampleRss([gw.pid], 50);
    const big = await rounds(gw, 'bench.big', 40, 3);
    const bigMaxRss = sampler.stop().get(gw.pid);
    log(
      `overload bigAnswers c40 x3: max RSS ${round(bigMaxRss, 1)} MB (idle ${round(idleRss, 1)}), ` +
        `served ${big.served}, busy ${big.busy}, other errors ${big.error}`,
    );
    return {
      c40: {
        maxRssMb: round(bigMaxRss, 1),
        idleRssMb: round(idleRss, 1),
        answerBytes: BIG_BYTES,
        calls: 120,
        ...big,
      },
    };
  } finally {
    gw.child.kill('SIGTERM');
  }
}
