// overload.listChangedStorm: one upstream MCP server sends notifications/tools/list_changed
// every 10 ms for a second (100 notifications) on its standalone GET stream, while another
// upstream and a Tool Service bundle sit beside it. Counted at the servers themselves: the
// tools/list pulls the storming upstream gets (target ≤ 3), the pulls of every other source
// (the other upstream's tools/list, the bundle manifest; target 0), the gateway's log lines
// about the storm, how soon the first pull follows the first notification, and how long after
// the last notification the last state is published (docs/operations.md §10 "Lists").
//
// Env: BENCH_STORM_COUNT (100), BENCH_STORM_INTERVAL_MS (10).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { CORE_TARGET, int, log, sleep } from './config.mjs';
import { rpc, spawnGateway, waitReady } from './processes.mjs';
import { round } from './stats.mjs';

const COUNT = int('BENCH_STORM_COUNT', 100);
const INTERVAL_MS = int('BENCH_STORM_INTERVAL_MS', 10);
/** After the last notification: the flood limit (1000 ms by default) twice over, and some. */
const SETTLE_MS = 3000;

/**
 * A 2025-era upstream in this process (v1 SDK `Server`, stateful sessions, GET stream) whose
 * tools/list shows its generation: `gen_<n>`. Counts the tools/list requests it answers.
 */
async function startUpstream() {
  const sessions = new Map(); // Mcp-Session-Id -> { transport, server }
  const state = { generation: 0, toolsLists: [], getStreams: 0 };
  const build = () => {
    const server = new Server(
      { name: 'storm-bench', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => {
      state.toolsLists.push(performance.now());
      return {
        tools: [{ name: `gen_${state.generation}`, inputSchema: { type: 'object' } }],
      };
    });
    return server;
  };
  const http = createServer((req, res) => {
    void (async () => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const raw = Buffer.concat(chunks);
      const body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
      const id = req.headers['mcp-session-id'];
      const session = typeof id === 'string' ? sessions.get(id) : undefined;
      if (session !== undefined) {
        if (req.method === 'GET') {
          state.getStreams++;
          res.once('close', () => state.getStreams--);
        }
        await session.transport.handleRequest(req, res, body);
        return;
      }
      if (id === undefined && req.method === 'POST' && isInitializeRequest(body)) {
        const server = build();
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, { transport, server }),
          onsessionclosed: (sid) => sessions.delete(sid),
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      res.writeHead(id === undefined ? 400 : 404, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"No session"}}');
    })().catch(() => res.destroy());
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    state,
    /** Advances the generation and announces it on every session's GET stream. */
    announce() {
      state.generation++;
      for (const { server } of sessions.values())
        void server.sendToolListChanged().catch(() => undefined);
    },
    close: async () => {
      await Promise.all([...sessions.values()].map(({ server }) => server.close()));
      await new Promise((r) => {
        http.closeAllConnections();
        http.close(() => r());
      });
    },
  };
}

/** A Tool Service in this process that only serves a one-tool manifest, and counts its GETs. */
async function startManifestServer() {
  const state = { manifestGets: 0 };
  const manifest = JSON.stringify({
    bundleId: 'bench',
    revision: 'storm',
    tools: [
      {
        name: 'bench.echo',
        description: 'Storm bench tool.',
        inputSchema: { type: 'object' },
        _meta: { version: '1' },
      },
    ],
  });
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if ((req.url ?? '').startsWith('/tool-manifest')) state.manifestGets++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end((req.url ?? '').startsWith('/tool-manifest') ? manifest : '{}');
    });
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${http.address().port}`,
    state,
    close: () =>
      new Promise((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}

async function toolNames(gw, id) {
  const answer = await rpc(gw, id, 'tools/list');
  return (answer.json?.result?.tools ?? []).map((t) => t.name);
}

export async function listChangedStorm() {
  const [storm, other, ts] = await Promise.all([
    startUpstream(),
    startUpstream(),
    startManifestServer(),
  ]);
  const gw = await spawnGateway({
    core: CORE_TARGET,
    mcp: {
      identity: 'bench',
      registry: { refreshIntervalSeconds: 3600, refreshJitterSeconds: 0 },
      discovery: { enabled: true },
      bundles: [
        {
          id: 'bench',
          manifestUrl: `${ts.url}/tool-manifest`,
          baseEndpoint: `${ts.url}/mcp`,
          namePrefix: 'bench.',
          enabled: true,
        },
      ],
      upstreams: [
        { id: 'storm', url: storm.url },
        { id: 'other', url: other.url },
      ],
    },
  });
  const logText = () => readFileSync(gw.logFile, 'utf8');
  try {
    await waitReady(gw);
    const deadline = Date.now() + 30_000;
    while (storm.state.getStreams < 1) {
      if (Date.now() > deadline) throw new Error('storm: the gateway opened no GET stream');
      await sleep(20);
    }
    await sleep(500);
    const before = {
      storm: storm.state.toolsLists.length,
      other: other.state.toolsLists.length,
      manifest: ts.state.manifestGets,
      log: logText().length,
    };
    const startedAt = performance.now();
    // Each notification at its own time (startedAt + i × interval): a late timer on a loaded
    // machine does not stretch the storm beyond its second.
    for (let i = 0; i < COUNT; i++) {
      const wait = startedAt + i * INTERVAL_MS - performance.now();
      if (wait > 0) await sleep(wait);
      storm.announce();
    }
    const endedAt = performance.now();
    const last = `storm__gen_${storm.state.generation}`;
    let publishedAt;
    for (let id = 1; performance.now() - endedAt < 15_000; id++) {
      if ((await toolNames(gw, `storm-${id}`)).includes(last)) {
        publishedAt = performance.now();
        break;
      }
      await sleep(20);
    }
    await sleep(SETTLE_MS);
    const stormPulls = storm.state.toolsLists.slice(before.storm);
    const logLines = logText()
      .slice(before.log)
      .split('\n')
      .filter((l) => l.includes('Upstream storm:') && l.includes('list_changed')).length;
    const result = {
      notifications: COUNT,
      intervalMs: INTERVAL_MS,
      stormMs: round(endedAt - startedAt, 0),
      stormingUpstreamPulls: stormPulls.length,
      otherSourcePulls:
        other.state.toolsLists.length - before.other + (ts.state.manifestGets - before.manifest),
      logLines,
      firstPullAfterMs: stormPulls.length > 0 ? round(stormPulls[0] - startedAt, 1) : null,
      lastStatePublishedAfterMs: publishedAt === undefined ? null : round(publishedAt - endedAt, 0),
    };
    log(
      `overload listChangedStorm: ${COUNT} list_changed ${INTERVAL_MS} ms apart (${result.stormMs} ms): ` +
        `${result.stormingUpstreamPulls} pulls of it, ${result.otherSourcePulls} of other sources, ` +
        `${logLines} log lines; first pull ${result.firstPullAfterMs} ms after the first notification, ` +
        `last state published ${result.lastStatePublishedAfterMs} ms after the last`,
    );
    return result;
  } finally {
    await gw.stop();
    await Promise.all([storm.close(), other.close(), ts.close()]);
  }
}
