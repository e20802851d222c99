import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { waitFor } from './gateway-process';

/**
 * A raw SSE stream read frame by frame (node:http, so the test sees the bytes: message events
 * and comment lines), for notification streams that stay open
 * (docs/operations.md §11 "Notification streams").
 */
export class SseReader {
  /** The parsed `data:` JSON of each message event, in order. */
  readonly messages: any[] = [];
  /** The text of each comment line (`: text`), in order. */
  readonly comments: string[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** The non-SSE body, when the answer was not a stream. */
  body = '';
  ended = false;
  private buffer = '';

  private constructor(private readonly req: ClientRequest) {}

  /** Sends the request; resolves once the response head arrived. */
  static open(
    url: string,
    method: 'GET' | 'POST',
    headers: Record<string, string>,
    body?: string,
  ): Promise<SseReader> {
    const target = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method,
        agent: false,
        headers: {
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
      });
      const reader = new SseReader(req);
      req.on('response', (res) => {
        reader.status = res.statusCode ?? 0;
        reader.headers = res.headers;
        const isStream = String(res.headers['content-type']).startsWith('text/event-stream');
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (isStream ? reader.feed(chunk) : (reader.body += chunk)));
        res.on('end', () => (reader.ended = true));
        res.on('close', () => (reader.ended = true));
        resolve(reader);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Waits until a message matches (default 10 s). */
  async waitForMessage(match: (m: any) => boolean, timeoutMs = 10_000): Promise<any> {
    await waitFor(
      () => this.messages.some(match),
      timeoutMs,
      () => `no matching message; got ${JSON.stringify(this.messages)}`,
    );
    return this.messages.find(match);
  }

  async waitForEnd(timeoutMs = 10_000): Promise<void> {
    await waitFor(
      () => this.ended,
      timeoutMs,
      () => 'the stream did not end',
    );
  }

  /** Closes the stream from the client side. */
  close(): void {
    this.req.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end === -1) return;
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      for (const line of frame.split('\n')) {
        if (line.startsWith('data: ')) this.messages.push(JSON.parse(line.slice(6)));
        else if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      }
    }
  }
}
