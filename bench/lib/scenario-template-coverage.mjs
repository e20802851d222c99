// overload.templateCoverage: two upstream MCP servers, one listing 10,000 resource templates,
// the other (configured after it) 10,000 resources (discovery.maxListItemsPerUpstream), all
// under one literal prefix (kb://articles/): templates kb://articles/{id}/rev<i>; every other
// resource is one of their URIs (kb://articles/a<i>/rev<i>, a conflict the templates'
// upstream keeps), the rest kb://articles/<i>, which none covers. Each publication decides,
// per resource, whether an earlier template covers it (docs/operations.md §10 "Routing"). The
// upstreams first list 10 entries each (the gateway gets ready on those), then the 10,000;
// three refresh rounds follow, back to back (a tools/call of an unknown tool each, contract
// §8, answered after the round; registry.notFoundRefreshMinIntervalMillis 0), the resource
// list changing in one entry every round so that every round publishes, under the loop
// monitor. Figures: publishMs, the median round (trigger to answer: both pulls and the
// publication), the longest event-loop stall over the rounds, and the resources' upstream
// status afterwards.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CORE_TARGET, log } from './config.mjs';
import { LOOP_MONITOR, benchTempDir, rpc, spawnGateway, waitReady } from './processes.mjs';
import { loopWindow } from './scenario-refresh.mjs';
import { median, round } from './stats.mjs';

export const COVERAGE_ENTRIES = 10_000;
const FIRST_ENTRIES = 10;
const ROUNDS = 3;

function templates(count) {
  return JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      uriTemplate: `kb://articles/{id}/rev${i}`,
      name: `revision ${i}`,
    })),
  );
}

/**
 * `count` resources, every other one covered by a template; the last one's URI names
 * `variant`, so each variant is another list (and publication) of the same size.
 */
function resources(count, variant) {
  const list = Array.from({ length: count }, (_, i) => ({
    uri: i % 2 === 0 ? `kb://articles/a${i}/rev${i}` : `kb://articles/${i}`,
    name: `article ${i}`,
  }));
  if (variant !== undefined) list[count - 1].uri = `kb://articles/${count - 1}v${variant}`;
  return JSON.stringify(list);
}

/**
 * A stateless 2025-11-25 MCP upstream on raw node:http (JSON answers, GET 405) serving one
 * resource list, `key` ("resources" or "resourceTemplates"), whose text `state.list` names.
 */
async function startResourceUpstream(name, method, key, lists) {
  const state = { list: 'first', pulls: 0 };
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
          capabilities: { resources: {} },
          serverInfo: { name, version: '1' },
        });
      else if (message.method === method) {
        state.pulls++;
        result = `{"${key}":${lists[state.list]}}`;
      } else if (message.method.endsWith('/list')) {
        result = `{"${message.method === 'resources/list' ? 'resources' : 'resourceTemplates'}":[]}`;
      } else result = '{}';
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
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function upstreamRow(gw, id) {
  const view = await (await fetch(`${gw.managementUrl}/actuator/upstreams`)).json();
  return view.upstreams.find((u) => u.id === id);
}

/** `nodeOptions`: the chart's runtime settings (the overload scenario's CHART_NODE_OPTIONS). */
export async function templateCoverage(nodeOptions) {
  const tpl = await startResourceUpstream('tpl', 'resources/templates/list', 'resourceTemplates', {
    first: templates(FIRST_ENTRIES),
    big: templates(COVERAGE_ENTRIES),
  });
  const res = await startResourceUpstream('res', 'resources/list', 'resources', {
    first: resources(FIRST_ENTRIES),
    ...Object.fromEntries(
      Array.from({ length: ROUNDS }, (_, i) => [`big${i}`, resources(COVERAGE_ENTRIES, i)]),
    ),
  });
  const loopFile = join(benchTempDir('loop-template-coverage'), 'loop.json');
  const gw = await spawnGateway({
    core: CORE_TARGET,
    nodeArgs: ['--require', LOOP_MONITOR],
    env: { NODE_OPTIONS: nodeOptions, BENCH_LOOP_FILE: loopFile },
    mcp: {
      identity: 'bench',
      // rounds back to back: a round's time is its pulls and publication, not the wait
      registry: {
        refreshIntervalSeconds: 3600,
        refreshJitterSeconds: 0,
        notFoundRefreshMinIntervalMillis: 0,
      },
      discovery: { enabled: true },
      upstreams: [
        { id: 'tpl', url: tpl.url, timeouts: { listMillis: 60_000 } },
        { id: 'res', url: res.url, timeouts: { listMillis: 60_000 } },
      ],
    },
  });
  try {
    await waitReady(gw);
    tpl.state.list = 'big';
    await loopWindow(gw, loopFile, 1); // the window starts clean
    const roundsMs = [];
    for (let i = 0; i < ROUNDS; i++) {
      res.state.list = `big${i}`;
      const started = performance.now();
      // the answer comes after the refresh round (contract §8): both pulls and the publication
      const answer = await rpc(gw, i + 1, 'tools/call', {
        name: `no_such_tool_${i}`,
        arguments: {},
      });
      roundsMs.push(performance.now() - started);
      if (answer.json?.error === undefined)
        throw new Error(`an unknown tool was not refused: ${answer.text.slice(0, 200)}`);
    }
    const loop = await loopWindow(gw, loopFile, 2);
    const stall = Math.max(loop.maxDelayMs, loop.maxGapMs);
    const row = await upstreamRow(gw, 'res');
    const conflicts = row?.resourceConflicts?.length ?? null;
    const publishMs = median(roundsMs);
    log(
      `overload templateCoverage ${COVERAGE_ENTRIES} templates x ${COVERAGE_ENTRIES} resources, ` +
        `${ROUNDS} publishing rounds: median ${round(publishMs, 1)} ms ` +
        `(${roundsMs.map((ms) => round(ms, 0)).join(', ')}), longest event-loop stall ${round(stall, 1)} ms; ` +
        `res ${row?.status} with ${row?.counts?.resources} resources, ${conflicts} conflicts shown`,
    );
    return {
      publishMs: round(publishMs, 1),
      roundsMs: roundsMs.map((ms) => round(ms, 1)),
      maxEventLoopStallMs: round(stall, 1),
      templates: COVERAGE_ENTRIES,
      resources: COVERAGE_ENTRIES,
      rounds: ROUNDS,
      templatePulls: tpl.state.pulls,
      resourcePulls: res.state.pulls,
      resStatus: row?.status ?? null,
      resConflictsShown: conflicts,
    };
  } finally {
    await gw.stop();
    await Promise.all([tpl.close(), res.close()]);
  }
}
