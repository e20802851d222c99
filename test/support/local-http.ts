import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The whole body of a request, and its JSON (undefined when empty or not JSON). */
export async function readJson(req: IncomingMessage): Promise<{ raw: Buffer; body: any }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  try {
    return { raw, body: raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8')) };
  } catch {
    return { raw, body: undefined };
  }
}

/** Listens on a free port of 127.0.0.1; the server's `/mcp` URL. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Stops the server, its idle keep-alive connections included. */
export function stopper(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}
