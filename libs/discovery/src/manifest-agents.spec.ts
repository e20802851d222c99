import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createManifestAgents } from './manifest-agents';

/**
 * The connect timeout of manifest pulls (contract §6 connectTimeoutMillis) counts the network,
 * not a busy event loop: a replica that is still booting may not look at its sockets for
 * longer than the timeout, while the connection was made at once.
 */
describe('createManifestAgents: the connect timeout', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** GETs through a fresh agent, keeping the event loop busy `busyMs` right after the connect starts. */
  function pull(connectTimeoutMillis: number, busyMs: number): Promise<string> {
    const agents = createManifestAgents(connectTimeoutMillis);
    return new Promise<string>((resolve, reject) => {
      const request = get({ host: '127.0.0.1', port, path: '/', agent: agents.http }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
      });
      request.on('error', (err) => reject(err));
      // the socket exists and is connecting: the loop is now busy well past the timeout
      const until = Date.now() + busyMs;
      while (Date.now() < until) {
        // busy, as a replica compiling its modules at boot is
      }
    }).finally(() => agents.http.destroy());
  }

  it('a connection made while the loop was busy past the timeout is not cut', async () => {
    await expect(pull(50, 300)).resolves.toBe('200');
  });
  // a connection really not made in time is still cut: manifest-fetcher.service.spec.ts, "counts
  // the TLS handshake in the connect timeout" (a server that never answers the handshake)
});
