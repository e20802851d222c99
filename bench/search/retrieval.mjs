// The tool-search retrieval benchmark (docs/benchmarks.md, "Tool search"; `npm run bench:search`,
// after `npm run build`). A real gateway publishes 358 tools of 16 MCP servers from the npm
// registry (bench/search/real-tools.json, their own tools/list) as one bundle each, plus the
// sample insurance bundle, with `mcp.toolSearch` on; the labelled queries of
// bench/search/queries.json (a task in words → the tool that does it) go through
// `gateway__search_tools` on /mcp. Reported: recall@5 and MRR (reciprocal rank within the first
// 10) per half (even index: the tuning half, odd: held out); the search latency through /mcp on
// that catalog and on a 10,000-tool one; and the bytes an agent reads to discover a tool (the
// search tools' list, a search answer and a describe answer) against the plain tools/list.
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  REPO_ROOT,
  freePort,
  killAll,
  spawnGateway,
  spawnNode,
  waitReady,
} from '../lib/processes.mjs';
import { buildManifest } from '../lib/tool-service.mjs';

const here = join(REPO_ROOT, 'bench', 'search');
const real = JSON.parse(readFileSync(join(here, 'real-tools.json'), 'utf8'));
const { queries } = JSON.parse(readFileSync(join(here, 'queries.json'), 'utf8'));
const LATENCY_SEARCHES = Number(process.env.BENCH_SEARCH_LATENCY_CALLS) || 400;
const PUBLISHED = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'];

/** One manifest per real server: its tools as published members, under `<server>.`. */
function manifestOf(server) {
  return {
    bundleId: server.server,
    revision: server.version,
    tools: server.tools.map((tool) => ({
      name: `${server.server}.${tool.name}`,
      ...Object.fromEntries(
        PUBLISHED.filter((k) => tool[k] !== undefined).map((k) => [k, tool[k]]),
      ),
      _meta: { version: '1' },
    })),
  };
}

/** A Tool Service in this process serving the manifests (calls are never made). */
async function serveManifests(manifests) {
  const bodies = new Map([...manifests].map(([id, m]) => [id, Buffer.from(JSON.stringify(m))]));
  const server = createServer((req, res) => {
    const id = decodeURIComponent((req.url ?? '').replace(/^\/manifest\//, ''));
    const body = bodies.get(id);
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${port}` };
}

/**
 * The gateway's own measure of its searches (mcp_gateway_tool_search_duration_seconds, a
 * summary over the last 10 minutes): the ranking alone, without HTTP and JSON-RPC.
 */
async function inProcessQuantiles(managementUrl) {
  const scrape = await (await fetch(`${managementUrl}/actuator/prometheus`)).text();
  const quantile = (q) => {
    const m = new RegExp(
      `^mcp_gateway_tool_search_duration_seconds\\{quantile="${q}"\\} (\\S+)$`,
      'm',
    ).exec(scrape);
    return m === null ? null : round(Number(m[1]) * 1000);
  };
  return { p50Ms: quantile('0.5'), p99Ms: quantile('0.99') };
}

async function call(url, name, args, id = 1) {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    }),
  });
  const text = await res.text();
  return {
    ms: performance.now() - started,
    bytes: Buffer.byteLength(text),
    json: JSON.parse(text),
  };
}

async function listBytes(url) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  });
  const text = await res.text();
  return { bytes: Buffer.byteLength(text), tools: JSON.parse(text).result.tools.length };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const round = (v, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

async function gatewayWith(source, ids, extra, sample) {
  const bundles = ids.map((id) => ({
    id,
    manifestUrl: `${source.url}/manifest/${encodeURIComponent(id)}`,
    baseEndpoint: `${source.url}/mcp`,
    namePrefix: id === 'bench' ? 'bench.' : `${id}.`,
  }));
  if (sample !== undefined)
    bundles.push({
      id: 'insurance-processing',
      manifestUrl: `${sample}/tool-manifest`,
      baseEndpoint: `${sample}/mcp`,
      namePrefix: 'processing.',
    });
  const gw = await spawnGateway({
    mcp: {
      identity: 'bench-search',
      registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
      discovery: {
        enabled: true,
        maxToolsPerBundle: 10000,
        maxToolsTotal: 20000,
        maxManifestBytes: 33554432,
      },
      bundles,
      toolSearch: { enabled: true },
      ...extra,
    },
  });
  await waitReady(gw);
  return gw;
}

async function main() {
  const samplePort = await freePort();
  const sample = spawnNode([join(REPO_ROOT, 'dist', 'apps', 'sample-tool-service', 'main.js')], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, PORT: String(samplePort), HOST: '127.0.0.1' },
  });
  const manifests = new Map(real.servers.map((s) => [s.server, manifestOf(s)]));
  manifests.set('bench', buildManifest(10_000, 'r1', 'v1'));
  const source = await serveManifests(manifests);
  await new Promise((r) => setTimeout(r, 1500)); // the sample Tool Service starts
  const ids = real.servers.map((s) => s.server);
  const gw = await gatewayWith(
    source,
    ids,
    { virtualServers: [{ id: 'plain', sources: [...ids, 'insurance-processing'] }] },
    `http://127.0.0.1:${samplePort}`,
  );
  const status = await (await fetch(`${gw.managementUrl}/actuator/toolBundles`)).json();
  const refused = status.bundles
    .filter((b) => b.status !== 'healthy')
    .map((b) => `${b.id} (${b.lastFailureReason})`);
  const plain = await listBytes(`${gw.mcpUrl}/servers/plain`);

  const halves = { tune: [], heldOut: [] };
  let searchBytes = 0;
  let describeBytes = 0;
  for (const [i, query] of queries.entries()) {
    const answer = await call(
      gw.mcpUrl,
      'gateway__search_tools',
      { query: query.q, limit: 10 },
      i + 1,
    );
    const names = answer.json.result.structuredContent.tools.map((t) => t.name);
    const rank = names.indexOf(query.tool) + 1;
    (i % 2 === 0 ? halves.tune : halves.heldOut).push({ ...query, rank, top: names.slice(0, 3) });
    searchBytes += answer.bytes;
    const described = await call(gw.mcpUrl, 'gateway__describe_tools', {
      names: [names[0] ?? query.tool],
    });
    describeBytes += described.bytes;
  }
  const score = (rows) => ({
    queries: rows.length,
    recallAt5: round(rows.filter((r) => r.rank > 0 && r.rank <= 5).length / rows.length),
    mrr: round(rows.reduce((s, r) => s + (r.rank > 0 ? 1 / r.rank : 0), 0) / rows.length),
    misses: rows
      .filter((r) => r.rank === 0 || r.rank > 5)
      .map((r) => ({ q: r.q, want: r.tool, rank: r.rank, top: r.top })),
  });
  const searchList = await listBytes(gw.mcpUrl);

  const latency = async (url) => {
    const times = [];
    for (let i = 0; i < LATENCY_SEARCHES; i++) {
      const q = queries[i % queries.length].q;
      times.push((await call(url, 'gateway__search_tools', { query: q, limit: 5 }, i)).ms);
    }
    return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
  };
  const realLatency = await latency(gw.mcpUrl);
  const realInProcess = await inProcessQuantiles(gw.managementUrl);
  gw.child.kill('SIGTERM');

  const big = await gatewayWith(source, ['bench'], {});
  await call(big.mcpUrl, 'gateway__search_tools', { query: 'warm the index', limit: 1 });
  const bigLatency = await latency(big.mcpUrl);
  const bigInProcess = await inProcessQuantiles(big.managementUrl);
  big.child.kill('SIGTERM');

  const tune = score(halves.tune);
  const heldOut = score(halves.heldOut);
  const n = queries.length;
  const result = {
    catalog: { servers: real.servers.length + 1, tools: plain.tools, refusedBundles: refused },
    search: {
      recallAt5: heldOut.recallAt5,
      mrr: heldOut.mrr,
      tune: { recallAt5: tune.recallAt5, mrr: tune.mrr, queries: tune.queries },
      heldOut: { recallAt5: heldOut.recallAt5, mrr: heldOut.mrr, queries: heldOut.queries },
      misses: [...tune.misses, ...heldOut.misses],
      real: { ...realLatency, inProcess: realInProcess },
      t10000: { ...bigLatency, inProcess: bigInProcess },
    },
    discoveryBytes: {
      plainToolsList: plain.bytes,
      searchToolsList: searchList.bytes,
      perTask: Math.round(searchList.bytes + searchBytes / n + describeBytes / n),
      searchAnswerAvg: Math.round(searchBytes / n),
      describeAnswerAvg: Math.round(describeBytes / n),
    },
  };
  const out = join(REPO_ROOT, 'bench', 'results', 'search-latest.json');
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `catalog: ${result.catalog.tools} tools from ${result.catalog.servers} sources${refused.length > 0 ? `; refused: ${refused.join(', ')}` : ''}`,
  );
  console.log(
    `search.recallAt5 ${heldOut.recallAt5} (held-out ${heldOut.queries} queries; tuning half ${tune.recallAt5})   target >= 0.9`,
  );
  console.log(`search.mrr       ${heldOut.mrr} (tuning half ${tune.mrr})`);
  console.log(
    `search.t10000.p50Ms ${bigLatency.p50Ms} (p99 ${bigLatency.p99Ms}) through /mcp   target <= 2`,
  );
  console.log(
    `search.t10000.inProcess.p50Ms ${bigInProcess.p50Ms} (p99 ${bigInProcess.p99Ms}) ranking alone   target <= 2`,
  );
  console.log(
    `search on the ${result.catalog.tools}-tool catalog: p50 ${realLatency.p50Ms} ms, p99 ${realLatency.p99Ms} ms through /mcp; ${realInProcess.p50Ms} ms, ${realInProcess.p99Ms} ms in process`,
  );
  console.log(
    `discovery bytes: plain tools/list ${plain.bytes}; search tools list ${searchList.bytes} + a search ${result.discoveryBytes.searchAnswerAvg} + a describe ${result.discoveryBytes.describeAnswerAvg} = ${result.discoveryBytes.perTask} per task`,
  );
  for (const miss of result.search.misses)
    console.log(
      `  miss: "${miss.q}" wants ${miss.want}, rank ${miss.rank || '>10'}, top ${miss.top.join(', ')}`,
    );
  console.log(`results: ${out}`);
  source.server.close();
  sample.child.kill('SIGTERM');
}

try {
  await main();
} finally {
  killAll();
}
process.exit(0);
