import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolServiceClient } from './tool-service-client';

/** What the warm-up did; `completed` is false when it gave up at its deadline. */
export interface WarmUpReport {
  readonly calls: number;
  readonly elapsedMs: number;
  readonly completed: boolean;
}

const OK_ANSWER = Buffer.from(
  JSON.stringify({ content: [{ type: 'text', text: 'warm-up '.repeat(32) }] }),
);
/** More levels than the warm-up allows: refused after its first bytes, like a hostile answer. */
const DEEP_LEVELS = 16 * 1024;
const DEEP_ANSWER = Buffer.from(`${'['.repeat(DEEP_LEVELS)}1${']'.repeat(DEEP_LEVELS)}`);
const WARM_UP_DEPTH = 128;

/**
 * Runs the HTTP path to Tool Services once before the gateway takes traffic
 * (docs/operations.md §2 "Start-up warm-up"; the stall it prevents:
 * docs/benchmarks.md "The deep-answer stall: where it went"). The first calls of a fresh process
 * pay, once, for parsing, compiling and first running undici's connect, request and response code
 * and the gateway's own, and for compiling undici's llhttp parser (WebAssembly); on the gateway's
 * one core those first calls held the event loop for 50–90 ms, whatever the Tool Service answered.
 * Paid here instead, alongside discovery's first pull.
 *
 * `calls` concurrent calls go to a server of this process on 127.0.0.1 (an ephemeral port,
 * closed at the end) through a client of their own, so the real client's connections, the
 * answer budget, the metrics and the logs see none of them. Half are answered with a small JSON
 * answer, half with one nested too deep, refused after its first bytes and its connection cut,
 * as a hostile answer is. Never throws; gives up after `deadlineMillis`.
 */
export async function warmUpToolServiceClient(
  options: { calls?: number; deadlineMillis?: number } = {},
): Promise<WarmUpReport> {
  const { calls = 8, deadlineMillis = 1000 } = options;
  const started = performance.now();
  let server: Server | undefined;
  let client: ToolServiceClient | undefined;
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMillis);
  });
  const work = async (): Promise<true> => {
    const listening = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = req.url === '/warm-up/deep' ? DEEP_ANSWER : OK_ANSWER;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      });
    });
    server = listening;
    // The deep answers' connections are cut by the client: no error worth a word.
    listening.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(0, '127.0.0.1', resolve);
    });
    if (over) return true; // gave up meanwhile: the server is closed already
    const origin = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    const warming = new ToolServiceClient(deadlineMillis, calls);
    client = warming;
    await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        warming.post({
          origin,
          path: i % 2 === 0 ? '/warm-up/ok' : '/warm-up/deep',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: '{}',
          timeoutMillis: deadlineMillis,
          maxResponseBytes: DEEP_ANSWER.length,
          maxJsonDepth: WARM_UP_DEPTH,
        }),
      ),
    );
    return true;
  };
  let completed: boolean;
  try {
    completed = await Promise.race([work(), deadline]);
  } catch {
    completed = false;
  } finally {
    over = true;
    clearTimeout(timer);
    await client?.destroy().catch(() => undefined);
    if (server !== undefined) {
      server.closeAllConnections();
      server.close();
    }
  }
  return { calls, elapsedMs: performance.now() - started, completed };
}
