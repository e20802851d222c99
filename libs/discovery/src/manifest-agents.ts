import { Agent as HttpAgent, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** A new connection to a Tool Service was not established within connectTimeoutMillis. */
export class ManifestConnectTimeoutError extends Error {
  override readonly name = 'ManifestConnectTimeoutError';
  readonly code = 'MANIFEST_CONNECT_TIMEOUT';
}

/** Idle kept-alive sockets are closed after this long (the Tool Service may close sooner). */
const FREE_SOCKET_TIMEOUT_MILLIS = 4_000;

/**
 * Destroys `socket` if it is still connecting after `millis` (TCP connect for http, TCP
 * connect and TLS handshake for https). Node's agents have no connect timeout of their own.
 */
function armConnectTimeout(
  socket: Duplex | null | undefined,
  millis: number,
  connected: 'connect' | 'secureConnect',
): void {
  if (!(socket instanceof Socket) || (!socket.connecting && connected === 'connect')) return;
  let made = false;
  const timer = setTimeout(() => {
    // A loop busy past the deadline (a replica still booting) runs this timer before the I/O
    // of the same turn, where a connection made meanwhile is told: look again after that I/O,
    // so a connection made within connectTimeoutMillis is not cut for the loop's delay (undici
    // checks its own connect timeout the same way).
    setImmediate(() => {
      if (!made && !socket.destroyed) socket.destroy(new ManifestConnectTimeoutError());
    });
  }, millis);
  socket.once(connected, () => {
    made = true;
    clearTimeout(timer);
  });
  socket.once('close', () => clearTimeout(timer));
}

class TimedHttpAgent extends HttpAgent {
  constructor(private readonly connectTimeoutMillis: number) {
    super({ keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MILLIS, scheduling: 'lifo' });
  }

  override createConnection(
    options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    armConnectTimeout(socket, this.connectTimeoutMillis, 'connect');
    return socket;
  }
}

class TimedHttpsAgent extends HttpsAgent {
  constructor(private readonly connectTimeoutMillis: number) {
    super({ keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MILLIS, scheduling: 'lifo' });
  }

  override createConnection(
    options: HttpsRequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    armConnectTimeout(socket, this.connectTimeoutMillis, 'secureConnect');
    return socket;
  }
}

/** The keep-alive agents of manifest pulls (one per scheme), with a connect timeout. */
export interface ManifestAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
}

/** @param connectTimeoutMillis contract §6 connectTimeoutMillis, per new connection */
export function createManifestAgents(connectTimeoutMillis: number): ManifestAgents {
  return {
    http: new TimedHttpAgent(connectTimeoutMillis),
    https: new TimedHttpsAgent(connectTimeoutMillis),
  };
}
