// overload.stalledStreams: notification streams whose clients stop reading while an upstream
// floods (docs/operations.md, "Notification streams", backpressure). Ten clients open
// `subscriptions/listen` on a resource of a 2026 upstream (the v2 SDK in this process) and stop
// reading; the upstream then sends ~1,000 `notifications/resources/updated` per second (~2 KB
// each on the client's stream) for FLOOD_SECONDS, while one client keeps reading. Figures: the
// gateway's RSS before, at its highest and at the end, the streams it closed as slow
// consumers (its metric), and whether the reading client was served throughout.
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { CORE_TARGET, log } from './config.mjs';
import { memoryMb, sampleRss } from './proc.mjs';
import { spawnGateway, waitReady } from './processes.mjs';
import { listenRequest } from './listen-request.mjs';
import { round } from './stats.mjs';
import { mount } from './v2-fanout-server.mjs';

const V = '2026-07-28';
const LONG_URI = `status://flood/${'x'.repeat(1985)}`;
const STALLED = 10;
const FLOOD_SECONDS = 20;
const PER_TICK = 10; // every 10 ms: ~1,000 per second

async function startFloodUpstream() {
  const handler = createMcpHandler(() => {
    const server = new McpServer(
      { name: 'flood', version: '1.0.0' },
      { capabilities: { resources: { subscribe: true, listChanged: true } } },
    );
    server.registerResource('flood', LONG_URI, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ok' }],
    }));
    return server;
  });
  const server = createServer(mount(handler));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    notify: () => handler.notify.resourceUpdated(LONG_URI),
    close: async () => {
      await handler.close?.();
      server.closeAllConnections();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

/** A raw listen on LONG_URI; resolves once acknowledged, then pauses reading when `stall`. */
function listen(port, id, stall) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const state = { socket, received: 0, ended: false, head: '' };
    socket.on('data', (chunk) => {
      state.received += chunk.length;
      if (state.head === null) return;
      state.head += chunk.toString('latin1');
      if (state.head.includes('notifications/subscriptions/acknowledged')) {
        const honoured = state.head.includes('"resourceSubscriptions"');
        state.head = null;
        if (stall) socket.pause();
        resolve({ ...state, honoured, state });
      }
    });
    socket.on('close', () => (state.ended = true));
    socket.on('error', (err) => (state.head === null ? (state.ended = true) : reject(err)));
    socket.write(listenRequest(port, id, { resourceSubscriptions: [LONG_URI] }, 'bench'));
  });
}

async function slowConsumersClosed(gw) {
  const text = await (await fetch(`${gw.managementUrl}/actuator/prometheus`)).text();
  const series = 'mcp_gateway_notification_streams_closed_total{reason="slow_consumer"} ';
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

export async function stalledStreams(ts, nodeOptions) {
  const flood = await startFloodUpstream();
  const gw = await spawnGateway({
    core: CORE_TARGET,
    toolService: ts,
    catalog: 'overload',
    env: { NODE_OPTIONS: nodeOptions },
    mcpExtra: { http: { modernEra: true }, upstreams: [{ id: 'flood', url: flood.url }] },
  });
  const sockets = [];
  try {
    await waitReady(gw);
    // the upstream's listen support is known once it was pulled
    const deadline = Date.now() + 30_000;
    for (;;) {
      const probe = await listen(gw.port, 'probe', false);
      probe.socket.destroy();
      if (probe.honoured) break;
      if (Date.now() > deadline) throw new Error('the flood upstream was never honoured');
      await new Promise((r) => setTimeout(r, 200));
    }
    const reader = await listen(gw.port, 'reader', false);
    sockets.push(reader.socket);
    for (let i = 0; i < STALLED; i++) sockets.push((await listen(gw.port, `s${i}`, true)).socket);
    await new Promise((r) => setTimeout(r, 1000));
    const baselineRssMb = memoryMb(gw.pid).rssMb;
    const closedBefore = await slowConsumersClosed(gw);
    const rss = sampleRss([gw.pid], 50);
    let sent = 0;
    const started = performance.now();
    const timer = setInterval(() => {
      for (let i = 0; i < PER_TICK; i++) flood.notify();
      sent += PER_TICK;
    }, 10);
    await new Promise((r) => setTimeout(r, FLOOD_SECONDS * 1000));
    clearInterval(timer);
    const seconds = (performance.now() - started) / 1000;
    const maxRssMb = rss.stop().get(gw.pid) ?? 0;
    const result = {
      clients: STALLED,
      seconds: round(seconds, 1),
      notificationsPerSecond: Math.round(sent / seconds),
      baselineRssMb: round(baselineRssMb, 1),
      maxRssMb: round(maxRssMb, 1),
      rssGrowthMb: round(maxRssMb - baselineRssMb, 1),
      endRssMb: round(memoryMb(gw.pid).rssMb, 1),
      closedSlowConsumers: (await slowConsumersClosed(gw)) - closedBefore,
      readerServed: !reader.state.ended && reader.state.received > 0,
      readerReceivedMb: round(reader.state.received / 1024 / 1024, 1),
    };
    log(`  stalledStreams: ${JSON.stringify(result)}`);
    return result;
  } finally {
    for (const socket of sockets) socket.destroy();
    await gw.stop();
    await flood.close();
  }
}
