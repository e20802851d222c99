import { STATUS_CODES, type IncomingMessage } from 'node:http';

/** How long a connection ended by a refusal keeps reading what the client still sends, in ms. */
export const LINGER_MS = 2_000;

/** An answer written on the socket itself: status, headers (content-length is added), body. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Answers a request whose body is left unread (a refusal before it is read: too large, a
 * foreign `Host`…) and ends the connection with a lingering close (RFC 9112 §9.6): the answer,
 * with `Connection: close`, is written on the socket itself, which then half-closes and reads
 * what the client is still sending, dropping it, for at most LINGER_MS (less once the client
 * ends its side). Closing at once with the rest of the body unread makes the kernel answer
 * what still arrives with a reset, and a client that had not read the answer yet loses it to
 * that reset (ECONNRESET). Both the /mcp listeners and the management port refuse this way
 * (docs/security.md "The management port").
 */
export function lingeringClose(req: IncomingMessage, answer: RawAnswer): void {
  const socket = req.socket;
  req.removeAllListeners('data');
  req.on('data', () => undefined);
  req.on('error', () => undefined);
  req.resume();
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const headers: Record<string, string> = { ...answer.headers, connection: 'close' };
  headers['content-length'] = String(Buffer.byteLength(answer.body));
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const reason = STATUS_CODES[answer.status] ?? '';
  socket.end(`HTTP/1.1 ${answer.status} ${reason}\r\n${lines}\r\n${answer.body}`);
  const done = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(done, LINGER_MS);
  timer.unref();
  socket.once('end', done);
  socket.once('close', () => clearTimeout(timer));
}
