// overload.hugeUpstreamList: an upstream MCP server whose tools/list holds 40,000 tools (about
// 5 MB, under the answer cap of execution.maxResponseBytes), each with its own inputSchema,
// while the gateway runs with the default caps (discovery.maxToolsPerBundle 100, so
// maxToolsPerUpstream 100; maxToolsTotal 200). The upstream first lists 10 tools (its last
// good list), then the huge list; three refresh rounds follow (each started by a tools/call of
// an unknown tool, contract §8), under the loop monitor and an RSS sampler (every 50 ms).
// Figures: the longest event-loop stall and the max RSS over those rounds; the upstream's
// status afterwards (it keeps its 10 tools and names the cap that refused the list).
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CORE_TARGET, log } from './config.mjs';
import { sampleRss } from './proc.mjs';
import { LOOP_MONITOR, benchTempDir, rpc, spawnGateway, waitReady } from './processes.mjs';
import { loopWindow } from './scenario-refresh.mjs';
import { round } from './stats.mjs';

export const HUGE_TOOLS = 40_000;
const GOOD_TOOLS = 10;
const ROUNDS = 3;

/** `count` tools, each with an inputSchema of its own (a distinct property name and bound). */
function toolsList(count) {
  const tools = [];
  for (let i = 0; i < count; i++)
    tools.push({
      name: `tool_${i}`,
      description: `Tool ${i}.`,
      inputSchema: {
        type: 'object',
        properties: { [`p${i}`]: { type: 'string', maxLength: i + 1 } },
      },
    });
  return JSON.stringify(tools);
}

/**
 * A stateless 2025-11-25 MCP upstream on raw node:http (JSON answers, GET 405) whose tools/list
 * answer is switched between a small and the huge list; counts the tools/list it answers.
 */
async function startListUpstream() {
  const lists = { good: toolsList(GOOD_TOOLS), huge: toolsList(HUGE_TOOLS) };
  const state = { list: 'good', pulls: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      let result;
      if (message.method === 'initialize')
        result = JSON.stringify({
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'huge-list', version: '1' },
        });
      else if (message.method === 'tools/list') {
        state.pulls++;
        result = `{"tools":${lists[state.list]}}`;
      } else result = '{"content":[]}';
      const body = Buffer.from(
        `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`,
      );
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    state,
    hugeBytes: Buffer.byteLength(`{"tools":${lists.huge}}`),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function upstreamRow(gw) {
  const view = await (await fetch(`${gw.managementUrl}/actuator/upstreams`)).json();
  return view.upstreams.find((u) => u.id === 'huge');
}

/** `nodeOptions`: the chart's runtime settings (the overload scenario's CHART_NODE_OPTIONS). */
export async function hugeUpstreamList(nodeOptions) {
  const upstream = await startListUpstream();
  const loopFile = join(benchTempDir('loop-huge-list'), 'loop.json');
  const gw = await spawnGateway({
    core: CORE_TARGET,
    nodeArgs: ['--require', LOOP_MONITOR],
    env: { NODE_OPTIONS: nodeOptions, BENCH_LOOP_FILE: loopFile },
    mcp: {
      identity: 'bench',
      registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
      discovery: { enabled: true },
      upstreams: [{ id: 'huge', url: upstream.url, timeouts: { listMillis: 60_000 } }],
    },
  });
  try {
    await waitReady(gw);
    const before = await upstreamRow(gw);
    if (before?.counts?.tools !== GOOD_TOOLS)
      throw new Error(
        `the upstream's ${GOOD_TOOLS} tools were not listed: ${JSON.stringify(before)}`,
      );
    upstream.state.list = 'huge';
    await loopWindow(gw, loopFile, 1); // the window starts clean
    const sampler = sampleRss([gw.pid], 50);
    const started = performance.now();
    const pullsBefore = upstream.state.pulls;
    for (let i = 1; i <= ROUNDS; i++) {
      const answer = await rpc(gw, i, 'tools/call', { name: `no_such_tool_${i}`, arguments: {} });
      if (answer.json?.error === undefined)
        throw new Error(`an unknown tool was not refused: ${answer.text.slice(0, 200)}`);
    }
    const windowMs = performance.now() - started;
    const maxRss = sampler.stop().get(gw.pid);
    const loop = await loopWindow(gw, loopFile, 2);
    const stall = Math.max(loop.maxDelayMs, loop.maxGapMs);
    const after = await upstreamRow(gw);
    const pulls = upstream.state.pulls - pullsBefore;
    log(
      `overload hugeUpstreamList ${HUGE_TOOLS} tools (${round(upstream.hugeBytes / 2 ** 20, 1)} MB), ` +
        `${ROUNDS} rounds: longest event-loop stall ${round(stall, 1)} ms, max RSS ${round(maxRss, 1)} MB; ` +
        `upstream ${after?.status} with ${after?.counts?.tools} tools (${after?.lastErrorType}), ${pulls} pulls in ${round(windowMs, 0)} ms`,
    );
    return {
      maxEventLoopStallMs: round(stall, 1),
      maxRssMb: round(maxRss, 1),
      tools: HUGE_TOOLS,
      listBytes: upstream.hugeBytes,
      rounds: ROUNDS,
      pulls,
      windowMs: round(windowMs, 0),
      upstreamStatus: after?.status ?? null,
      upstreamTools: after?.counts?.tools ?? null,
      upstreamLastErrorType: after?.lastErrorType ?? null,
    };
  } finally {
    await gw.stop();
    await upstream.close();
  }
}
