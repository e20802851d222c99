import type { Dispatcher } from 'undici';
import { exchange } from './http-exchange';
import { UpstreamFailure } from './upstream-types';
import { readStreamMessage } from './reply-reader';
import { resumableEventId, sessionLevelHeaders } from './request-shape';
import type { Session } from './upstream-session';
import type { JsonRpcMessage, UpstreamEndpoint, UpstreamMessageContext } from './upstream-types';

/** Bound on getting the head of the standalone GET stream (an answer that is no stream: its end), in ms. */
const STREAM_OPEN_MILLIS = 30_000;
/** Re-opening a dropped GET stream: first and longest wait, in ms; a stream that lived this long resets it. */
const STREAM_BACKOFF_FIRST_MILLIS = 250;
const STREAM_BACKOFF_MAX_MILLIS = 30_000;
const STREAM_HEALTHY_MILLIS = 10_000;

function backoffMillis(failures: number): number {
  return Math.min(STREAM_BACKOFF_MAX_MILLIS, STREAM_BACKOFF_FIRST_MILLIS * 2 ** (failures - 1));
}

function sleep(millis: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, millis);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** What the stream needs of its connection. */
export interface StandaloneStreamHost {
  readonly url: URL;
  readonly dispatcher: Dispatcher;
  readonly endpoint: Pick<UpstreamEndpoint, 'connectMillis' | 'maxAnswerBytes' | 'via'>;
  /** The gateway's own credential, asked at each (re)open (an expiring token is renewed). */
  ownHeaders(): Promise<Readonly<Record<string, string>>>;
  /** One readable message off the stream, while it is live. */
  deliver(message: JsonRpcMessage, context: UpstreamMessageContext): void;
  /** A message dropped unread (too deep, too wide, not JSON-RPC), while it is live. */
  dropped(): void;
  /**
   * The stream failed (why, in words naming no address) and is re-opened in `reopenMillis`:
   * the connection writes it, throttled, as a listen's end is (docs/operations.md §10).
   */
  failed(reason: string, reopenMillis: number): void;
}

/**
 * The 2025 standalone GET stream of one session (MCP 2025-11-25 Streamable HTTP, "Listening
 * for Messages from the Server"): opened after initialize, resumed with `Last-Event-ID`,
 * re-opened with backoff (250 ms doubling to 30 s) while it is not stopped. It is the
 * session's, never a caller's: it carries the gateway's own credential (docs/security.md,
 * "Credentials towards sources"). A 405 (no stream offered), 404 (the session is gone; the next
 * request re-initializes) or another non-5xx answer without a stream ends it.
 */
export class StandaloneStream {
  private readonly abort = new AbortController();
  private lastEventId?: string;

  constructor(
    private readonly session: Session,
    private readonly host: StandaloneStreamHost,
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private get live(): boolean {
    return !this.abort.signal.aborted;
  }

  /** Keeps the GET stream open until stopped; never rejects. */
  private async run(): Promise<void> {
    const { session, host } = this;
    const context: UpstreamMessageContext = { sessionId: session.sessionId };
    let failures = 0;
    while (this.live) {
      const started = performance.now();
      let streamed = false;
      let failure: string | undefined;
      try {
        const headers = sessionLevelHeaders(await host.ownHeaders(), session, 'text/event-stream');
        if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
        if (!this.live) return;
        const result = await exchange(host.dispatcher, {
          via: host.endpoint.via,
          url: host.url,
          method: 'GET',
          headers,
          timeoutMillis: STREAM_OPEN_MILLIS,
          timeoutScope: 'head',
          deadlineMillis: STREAM_OPEN_MILLIS,
          connectMillis: host.endpoint.connectMillis,
          maxBytes: host.endpoint.maxAnswerBytes,
          capScope: 'event',
          signal: this.abort.signal,
          onEvent: (event) => {
            if (event.id !== undefined) this.lastEventId = resumableEventId(event.id);
            // a replayed priming event: the v1 SDK's event stores keep it as `{}` (as a resumed
            // call's stream, UpstreamConnection.resumeStream); no message, nothing dropped
            if (event.data.trim() === '{}') return 'more';
            // a message nested too deep or unreadable is dropped unparsed (counted); the stream
            // goes on
            const message = readStreamMessage(event.data);
            if (!this.live) return 'more';
            if (message === undefined) host.dropped();
            else host.deliver(message, context);
            return 'more';
          },
        });
        // a priming event's id (empty data, never seen by onEvent) counts for the resume too
        if (result.kind === 'events' && result.lastEventId !== undefined)
          this.lastEventId = result.lastEventId;
        if (result.kind === 'body') {
          // Only 5xx is worth a retry.
          if (result.head.status < 500) return;
          failure = `HTTP ${result.head.status}`;
        } else {
          streamed = true;
        }
      } catch (err) {
        // unreachable, timeout, too-large, cut, no credential: try again below until stopped
        failure = err instanceof UpstreamFailure ? err.message : 'failed unexpectedly';
      }
      if (!this.live) return;
      failures =
        streamed && performance.now() - started >= STREAM_HEALTHY_MILLIS ? 1 : failures + 1;
      const wait = backoffMillis(failures);
      if (failure !== undefined) host.failed(failure, wait);
      await sleep(wait, this.abort.signal);
    }
  }
}
