import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * Ports for test servers that stop and listen again on the same port (an upstream "down", then
 * "back"; a Redis restarted): taken below the kernel's ephemeral range (ip_local_port_range,
 * 32768 and up by default), from which the OS hands out the ports of every listen(0) and
 * outgoing connection on the machine. A port from listen(0), released while its server is down,
 * was now and then handed to another process meanwhile (EADDRINUSE when the server came back).
 */
const LOW = 20_000;
const HIGH = 32_000;

const randomPort = (): number => LOW + Math.floor(Math.random() * (HIGH - LOW));

/** Listens on a free port of the stable range (trying another while one is taken); returns it. */
export async function listenOnStablePort(listen: (port: number) => Promise<void>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = randomPort();
    try {
      await listen(port);
      return port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 50) throw err;
    }
  }
}

/** A port of the stable range that nothing listens on now (for a server started later, or none). */
export async function stablePort(): Promise<number> {
  const probe: Server = createServer();
  const port = await listenOnStablePort(
    (p) =>
      new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen(p, '127.0.0.1', () => {
          probe.off('error', reject);
          resolve();
        });
      }),
  );
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return (probe.address() as AddressInfo | null)?.port ?? port;
}
