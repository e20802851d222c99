import { Agent } from 'undici';
import { exchange } from './http-exchange';
import { TestServer } from './testing/test-server';
import { UpstreamFailure } from './upstream-types';

/**
 * `timeoutScope: 'head'` frees a long-lived SSE stream (the 2025 GET stream,
 * standalone-stream.ts) from the deadline once its head arrived: its body is a stream of
 * events with no end. An answer that is no stream (a JSON body, an error status) is one answer
 * with an end, so the deadline keeps bounding it to its last byte: one that drips a byte a
 * second must not hold the exchange, and the stream that waits on it, for ever.
 */
describe('exchange with timeoutScope head', () => {
  let agent: Agent;
  let server: TestServer;

  beforeAll(async () => {
    agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: 1000 } });
    server = await TestServer.start((_req, res) => {
      const type = _req.headers['x-answer'] === 'sse' ? 'text/event-stream' : 'application/json';
      const status = _req.headers['x-answer'] === '503' ? 503 : 200;
      res.writeHead(status, { 'content-type': type, 'content-length': '1000' });
      // a byte every 100 ms: 100 s for the whole body
      const timer = setInterval(() => res.write(type === 'text/event-stream' ? ':' : ' '), 100);
      res.on('close', () => clearInterval(timer));
    });
  });

  afterAll(async () => {
    await server.stop();
    await agent.close();
  });

  const get = (answer: string, signal?: AbortSignal) =>
    exchange(agent, {
      url: new URL(server.url),
      method: 'GET',
      headers: { 'x-answer': answer },
      timeoutMillis: 400,
      timeoutScope: 'head',
      deadlineMillis: 400,
      connectMillis: 1000,
      maxBytes: 1 << 20,
      capScope: 'event',
      onEvent: () => 'more',
      signal,
    });

  it.each(['json', '503'])(
    'a %s body that drips is bound by the deadline to its last byte',
    async (answer) => {
      const failure = await get(answer).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(UpstreamFailure);
      expect((failure as UpstreamFailure).kind).toBe('timeout');
    },
  );

  it('an SSE stream is not: it outlives the deadline', async () => {
    const controller = new AbortController();
    const outcome = get('sse', controller.signal).then(
      () => 'ended',
      (err: unknown) => (err instanceof UpstreamFailure ? err.kind : 'other'),
    );
    // well past the deadline, the stream is still open; then the caller ends it
    const late = await Promise.race([
      outcome,
      new Promise((resolve) => setTimeout(() => resolve('open'), 1500)),
    ]);
    controller.abort();
    expect(late).toBe('open');
    expect(await outcome).toBe('cancelled');
  });
});
