import { connect, type Socket } from 'node:net';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { ListenUpstream } from '../support/listen-upstream';
import { TestToolService } from '../support/tool-service';

const V = '2026-07-28';
/** A resource whose URI is long (2,000 characters): each update is ~2 KB on the client's stream. */
const LONG_URI = `status://flood/${'x'.repeat(1985)}`;
const STALLED_CLIENTS = 10;

/** A raw listen on one connection: what it received, and whether the gateway ended it. */
interface RawListen {
  readonly socket: Socket;
  /** Bytes received so far. */
  received: number;
  /** true once the connection ended or closed. */
  ended: boolean;
  /** What arrived up to the acknowledgement (response head included). */
  head: string;
}

/**
 * Opens `subscriptions/listen` for LONG_URI on a raw connection; resolves once the
 * acknowledgement arrived. With `stall`, the client then stops reading (the socket is paused:
 * the kernel buffers fill and the gateway's writes stop draining).
 */
function rawListen(port: number, id: string, stall: boolean): Promise<RawListen> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      },
      notifications: { resourceSubscriptions: [LONG_URI] },
    },
  });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const listen: RawListen = { socket, received: 0, ended: false, head: '' };
    let acknowledged = false;
    socket.on('data', (chunk: Buffer) => {
      listen.received += chunk.length;
      if (acknowledged) return;
      listen.head += chunk.toString('latin1');
      if (listen.head.includes('notifications/subscriptions/acknowledged')) {
        acknowledged = true;
        if (stall) socket.pause();
        resolve(listen);
      }
    });
    const ended = (): void => {
      listen.ended = true;
    };
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', (err) => (acknowledged ? ended() : reject(err)));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${V}\r\n` +
        `Mcp-Method: subscriptions/listen\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

async function metric(gateway: GatewayProcess, series: string): Promise<number> {
  const text = await (await fetch(`${gateway.managementUrl}/actuator/prometheus`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const SLOW_CONSUMER = 'mcp_gateway_notification_streams_closed_total{reason="slow_consumer"}';

/**
 * Backpressure on notification streams (docs/operations.md, "Notification streams"): the
 * gateway writes a stream's next message only when its socket drained, holds at most
 * `listen.maxQueuedBytes` (1 MiB by default) for a client that does not read, and past that
 * closes the stream, counted in notification_streams_closed_total{reason="slow_consumer"}.
 * The input: ten clients open listen streams and stop reading while a 2026 upstream sends
 * ~1,000 notifications per second; a client that keeps reading is served on.
 */
describe.each(['fastify', 'node'])(
  'notification stream backpressure (MCP_HTTP_SERVER=%s)',
  (listener) => {
    let service: TestToolService;
    let flood: ListenUpstream;
    let gateway: GatewayProcess;
    let timer: NodeJS.Timeout | undefined;
    const sockets: Socket[] = [];

    beforeAll(async () => {
      service = await TestToolService.start(manifest('ins', [tool({ name: 'ins.quote' })]));
      flood = await ListenUpstream.start(['echo'], [LONG_URI]);
      gateway = await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ins', service, 'ins.')], {
            upstreams: [upstream('flood', flood.url)],
            shutdown: { gracePeriodSeconds: 3 },
          }),
          http: { modernEra: true },
        },
        env: { MCP_HTTP_SERVER: listener },
        waitReady: true,
      });
      // the gateway knows the upstream supports listen (and owns LONG_URI) once it was pulled
      await waitFor(
        async () => {
          const probe = await rawListen(gateway.mcpPort, 'probe', false);
          probe.socket.destroy();
          // honoured only when the owner of LONG_URI is known to support resource subscriptions
          return probe.head.includes('"resourceSubscriptions"');
        },
        15_000,
        () => 'no listen was acknowledged',
      );
    });

    afterAll(async () => {
      if (timer !== undefined) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await gateway?.stop();
      await flood?.stop();
      await service?.stop();
    });

    it('ten clients that stop reading while an upstream sends ~1000 notifications/s are each closed past listen.maxQueuedBytes and counted; the upstream listens are released; a reading client is served on', async () => {
      const before = await metric(gateway, SLOW_CONSUMER);
      const reader = await rawListen(gateway.mcpPort, 'reader', false);
      sockets.push(reader.socket);
      const stalled: RawListen[] = [];
      for (let i = 0; i < STALLED_CLIENTS; i++) {
        const s = await rawListen(gateway.mcpPort, `stalled-${i}`, true);
        sockets.push(s.socket);
        stalled.push(s);
      }
      // one upstream listen per client stream
      await waitFor(
        () => flood.openListens >= STALLED_CLIENTS + 1,
        15_000,
        () => `the gateway holds ${flood.openListens} upstream listens`,
      );

      // ~1,000 notifications per second: 10 every 10 ms
      timer = setInterval(() => {
        for (let i = 0; i < 10; i++) flood.notifyResourceUpdated(LONG_URI);
      }, 10);

      // every stalled stream is cut and counted (generous: the kernel's socket buffers fill first)
      await waitFor(
        async () => (await metric(gateway, SLOW_CONSUMER)) >= before + STALLED_CLIENTS,
        90_000,
        () => 'the stalled streams were not all closed',
      );
      expect(await metric(gateway, SLOW_CONSUMER)).toBe(before + STALLED_CLIENTS);
      // their upstream listens end with them; the reader's stays
      await waitFor(
        () => flood.openListens === 1,
        15_000,
        () => `${flood.openListens} upstream listens still open`,
      );
      expect(await metric(gateway, 'mcp_gateway_notification_streams_open')).toBe(1);

      // the reading client is not cut, and still gets notifications
      const got = reader.received;
      await waitFor(
        () => reader.received > got + 100_000,
        30_000,
        () => 'the reading client got nothing more',
      );
      expect(reader.ended).toBe(false);
      clearInterval(timer);
      timer = undefined;

      // a stalled client that reads again finds its stream ended by the gateway
      for (const s of stalled) s.socket.resume();
      await waitFor(
        () => stalled.every((s) => s.ended),
        30_000,
        () => `${stalled.filter((s) => !s.ended).length} stalled connections are still open`,
      );
    });
  },
);
