import { StringDecoder } from 'node:string_decoder';
import type { Transform } from 'node:stream';
import {
  BodyDecodeError,
  BROKEN_CONNECTION_CODES,
  ChunkList,
  contentDecoder,
  decodingOrder,
  isZlibError,
  type ContentCoding,
} from '@app/http-body';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import { UpstreamAddressRefusedError } from './connect-guard';
import { SseHeldBytes } from './sse-held-bytes';
import { SseLineEnds } from './sse-line-ends';
import { resumableEventId } from './request-shape';
import { UpstreamFailure, type UpstreamSignal } from './upstream-types';

/** One HTTP exchange with the upstream. */
export interface ExchangeRequest {
  readonly url: URL;
  readonly method: 'POST' | 'GET' | 'DELETE';
  /** Built for this request: `via` is set on it when given. */
  readonly headers: Record<string, string>;
  /** The gateway's `Via` entry (gatewayVia), sent in place of any the headers hold. */
  readonly via?: string;
  readonly body?: string;
  /**
   * Time left, in ms: for scope `whole` until the last byte, for scope `head` until the
   * response head when it opens a 2xx SSE stream parsed with onEvent (a long-lived stream then
   * has no bound), else until the last byte too. Over it = `timeout`.
   */
  readonly timeoutMillis: number;
  readonly timeoutScope: 'whole' | 'head';
  /** The deadline as the caller gave it, in ms: what the `timeout` message names. */
  readonly deadlineMillis: number;
  /** Bound, in ms, on getting onto a connected socket. Over it = `unreachable`. */
  readonly connectMillis: number;
  /**
   * Cap on the answer's bytes: the whole body (`total`) or each SSE event (`event`). With a
   * content coding it bounds the decoded bytes (and, for `total`, the bytes received too).
   */
  readonly maxBytes: number;
  readonly capScope: 'total' | 'event';
  /** Aborting = `cancelled`, and the HTTP request is aborted. */
  readonly signal?: UpstreamSignal;
  /**
   * Present = a 2xx `text/event-stream` answer is parsed as it arrives: called with each
   * event that has data (priming events with empty data and `retry:` fields are skipped), in
   * order. `'done'` ends the exchange there (the awaited response arrived); throwing an
   * UpstreamFailure fails it. Without it, every answer is collected as a body.
   */
  readonly onEvent?: (event: EventSourceMessage) => 'more' | 'done';
  /**
   * Present = once onEvent said `'done'`, the events the stream still carries in the grace it
   * is given to end (STREAM_END_GRACE_MILLIS, then it is cut) come here, each within the byte
   * cap, instead of being skipped: a `ping` or request sent after the response is still owed
   * an answer (docs/operations.md §10 "Relaying"). The exchange has resolved by then; a throw
   * is ignored. Without it they are skipped.
   */
  readonly onLateEvent?: (event: EventSourceMessage) => void;
  /** Called once with the response head, before any body byte. */
  readonly onHead?: (head: ExchangeHead) => void;
  /**
   * Sees each chunk of the answer's body as it arrives; a string ends the exchange at once as
   * failure `refused` with that message (the rest is never received).
   */
  readonly onChunk?: (chunk: Buffer) => string | undefined;
}

/** The response head fields the client uses. */
export interface ExchangeHead {
  readonly status: number;
  /** Media type, lower case, parameters dropped ('' when absent). */
  readonly mediaType: string;
  /** `Mcp-Session-Id` as sent (first value when repeated). */
  readonly sessionId?: string;
}

export type ExchangeResult =
  /** A complete non-stream answer (any status). */
  | { readonly kind: 'body'; readonly head: ExchangeHead; readonly body: Buffer }
  /**
   * An SSE answer: `done` when onEvent ended it, false when the stream ended first.
   * `lastEventId` is the last `id:` the stream set (a priming event with empty data included)
   * and `retryMillis` its last `retry:`: what a client resumes the stream with (GET with
   * Last-Event-ID after `retry` ms; MCP Streamable HTTP, "Resumability and Redelivery").
   * `bytes`: the (decoded) bytes of the stream taken so far, what a resumption counts on.
   */
  | {
      readonly kind: 'events';
      readonly head: ExchangeHead;
      readonly done: boolean;
      readonly bytes: number;
      readonly lastEventId?: string;
      readonly retryMillis?: number;
    };

/** An answer over its cap of `maxBytes` (an exchange's, or a stream's across its resumptions). */
export function answerTooLarge(maxBytes: number): UpstreamFailure {
  return new UpstreamFailure(
    'too-large',
    `the upstream's answer exceeded the limit of ${maxBytes} bytes`,
  );
}

/** After the awaited response, how long an SSE stream may take to end before it is cut. */
const STREAM_END_GRACE_MILLIS = 1000;

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function mediaTypeOf(value: string | undefined): string {
  return (value ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

export function timeoutFailure(deadlineMillis: number): UpstreamFailure {
  return new UpstreamFailure('timeout', `the upstream did not answer within ${deadlineMillis} ms`);
}

export function cancelledFailure(): UpstreamFailure {
  return new UpstreamFailure('cancelled', 'the request was cancelled before the upstream answered');
}

const NETWORK_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the upstream refused the connection',
  ENOTFOUND: "the upstream's host name could not be resolved",
  EAI_AGAIN: "the upstream's host name could not be resolved",
  EHOSTUNREACH: 'the upstream is unreachable (no route)',
  ENETUNREACH: 'the upstream is unreachable (no route)',
  ECONNRESET: 'the connection to the upstream was reset before it answered',
  EPIPE: 'the connection to the upstream was closed before it answered',
  UND_ERR_SOCKET: 'the connection to the upstream was closed before it answered',
  UND_ERR_CLOSED: 'the connection to the upstream was closed before it answered',
};

/**
 * The client-safe words of a connect the address guard refused: the class of the address and
 * what can allow it, never the host or the address (those go to the log).
 */
export function addressRefusedFailure(err: UpstreamAddressRefusedError): UpstreamFailure {
  return new UpstreamFailure(
    'address-refused',
    `the upstream's host resolved to ${err.refusal.className} when connecting, which a ` +
      `registered upstream may not reach (${err.refusal.allowedBy} can allow it); nothing was sent`,
  );
}

/**
 * An undici error before any response head, in words: never its own message, which names the
 * host and port.
 */
function failureBeforeHead(err: Error, request: ExchangeRequest): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  // the connect guard of a registered upstream (connect-guard.ts): named, never a network error
  if (err instanceof UpstreamAddressRefusedError) return addressRefusedFailure(err);
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError
  )
    return timeoutFailure(request.deadlineMillis);
  if (err instanceof undiciErrors.ConnectTimeoutError)
    return new UpstreamFailure('unreachable', 'the connection to the upstream timed out');
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('HPE_') || err instanceof undiciErrors.HTTPParserError)
      return new UpstreamFailure('bad-answer', "the upstream's answer is not valid HTTP");
    // answered, but with a head the HTTP client will not read: reached, so the request may
    // have run (never "could not be reached"; as tool-service-client.ts INVALID_ANSWER_CODES)
    if (code === 'UND_ERR_HEADERS_OVERFLOW')
      return new UpstreamFailure(
        'bad-answer',
        "the upstream's answer head (its status line and headers) is larger than the HTTP client reads",
      );
    if (code === 'UND_ERR_INFO')
      return new UpstreamFailure('bad-answer', "the upstream's interim (1xx) answer is not valid");
    const words = NETWORK_WORDS[code];
    if (words !== undefined)
      return new UpstreamFailure(
        'unreachable',
        `${words} (${code})`,
        undefined,
        BROKEN_CONNECTION_CODES.has(code),
      );
    if (code.includes('CERT') || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'))
      return new UpstreamFailure(
        'unreachable',
        `the TLS handshake with the upstream failed (${code})`,
      );
    if (code === 'UND_ERR_INVALID_ARG')
      return new UpstreamFailure('unreachable', 'the request could not be sent (invalid request)');
  }
  return new UpstreamFailure('unreachable', 'the upstream could not be reached (network error)');
}

/**
 * One exchange on undici's dispatch API (the house pattern of tool-service-client.ts): one
 * timer for the deadline, one for the connect, the caller's signal, bytes capped as they
 * arrive, and an abort of the HTTP request the moment any of them fires. SSE answers are
 * parsed with eventsource-parser while they stream. Rejects only with UpstreamFailure.
 */
/** Each dispatcher's connections per origin (its undici `connections`), as its owner registered it. */
const poolSizes = new WeakMap<Dispatcher, number>();
/** Exchanges dispatched and not yet ended, per dispatcher and origin. */
const inFlight = new WeakMap<Dispatcher, Map<string, number>>();

/**
 * Tells `exchange` how many connections `dispatcher` opens per origin: a request dispatched
 * past them waits in the pool for one to free, within its own deadline (docs/operations.md §1
 * `execution.maxConnectionsPerOrigin`), and is not bound by `connectMillis`, which is for
 * getting a connection made.
 */
export function registerPoolSize(dispatcher: Dispatcher, connections: number): void {
  poolSizes.set(dispatcher, connections);
}

/** Counts an exchange in flight to an origin; the function it returns ends the count, once. */
function countInFlight(
  dispatcher: Dispatcher,
  origin: string,
): { ahead: number; release: () => void } {
  let counts = inFlight.get(dispatcher);
  if (counts === undefined) {
    counts = new Map();
    inFlight.set(dispatcher, counts);
  }
  const held = counts;
  const ahead = held.get(origin) ?? 0;
  held.set(origin, ahead + 1);
  let released = false;
  return {
    ahead,
    release: () => {
      if (released) return;
      released = true;
      const left = (held.get(origin) ?? 1) - 1;
      if (left <= 0) held.delete(origin);
      else held.set(origin, left);
    },
  };
}

export function exchange(
  dispatcher: Dispatcher,
  request: ExchangeRequest,
): Promise<ExchangeResult> {
  return new Promise((resolve, reject) => {
    const { signal } = request;
    if (signal?.aborted === true) {
      reject(cancelledFailure());
      return;
    }
    const { ahead, release } = countInFlight(dispatcher, request.url.origin);
    const poolSize = poolSizes.get(dispatcher);
    // past the pool's connections the request waits for a free one, bound by its deadline only
    const waitsForPool = poolSize !== undefined && ahead >= poolSize;
    let settled = false;
    let ended = false;
    /** After the awaited response: the stream's later events are read for onLateEvent. */
    let late = false;
    /** Cuts a stream that goes on after the awaited response; cleared when the stream ends. */
    let graceTimer: NodeJS.Timeout | undefined;
    let controller: Dispatcher.DispatchController | undefined;
    let head: ExchangeHead | undefined;
    let parser: EventSourceParser | undefined;
    let decoder: StringDecoder | undefined;
    // kept so that one-byte chunks cost about what their bytes do (chunk-list.ts)
    const chunks = new ChunkList();
    let length = 0;
    let counted = 0;
    /** The content codingStages of a coded answer, in the order they run; undefined when unencoded. */
    let codingStages: Transform[] | undefined;
    let received = 0;
    let lastEventId: string | undefined;
    let retryMillis: number | undefined;

    const cut = (reason: Error): void => {
      if (controller !== undefined && !controller.aborted) controller.abort(reason);
    };
    const cleanup = (): void => {
      clearTimeout(deadlineTimer);
      clearTimeout(connectTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (failure: UpstreamFailure): void => {
      if (settled) return;
      settled = true;
      cleanup();
      cut(failure);
      for (const decoder of codingStages ?? []) decoder.destroy();
      reject(failure);
    };
    const succeed = (result: ExchangeResult): void => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(result);
    };
    const onAbort = (): void => fail(cancelledFailure());
    /** Stops reading the events after the response and cuts the stream (the exchange has resolved). */
    const stopLate = (): void => {
      late = false;
      cut(new Error('stream done'));
    };
    /** Over the byte cap: the exchange fails, or, after its response, the late reading stops. */
    const overCap = (): void => {
      if (settled) stopLate();
      else fail(tooLarge());
    };

    const deadlineTimer = setTimeout(
      () => fail(timeoutFailure(request.deadlineMillis)),
      Math.max(0, request.timeoutMillis),
    );
    const connectTimer = waitsForPool
      ? undefined
      : setTimeout(
          () =>
            fail(
              new UpstreamFailure(
                'unreachable',
                `could not connect to the upstream within ${request.connectMillis} ms`,
              ),
            ),
          request.connectMillis,
        );
    signal?.addEventListener('abort', onAbort, { once: true });

    /** The awaited response arrived: answer now, let the stream end by itself, briefly. */
    const streamDone = (): void => {
      if (head === undefined) return;
      succeed({ kind: 'events', head, done: true, bytes: length, lastEventId, retryMillis });
      if (!ended) {
        late = request.onLateEvent !== undefined;
        graceTimer = setTimeout(() => {
          late = false;
          if (!ended) cut(new Error('stream done'));
        }, STREAM_END_GRACE_MILLIS);
        graceTimer.unref();
      }
    };

    const onEvent = (event: EventSourceMessage): void => {
      if (event.id !== undefined) lastEventId = resumableEventId(event.id);
      if (event.data === '') return;
      if (settled) {
        if (!late) return;
        if (request.capScope === 'event') counted = 0;
        try {
          request.onLateEvent?.(event);
        } catch {
          // the exchange has resolved: nothing is left to fail
        }
        return;
      }
      if (request.capScope === 'event') counted = 0;
      let verdict: 'more' | 'done';
      try {
        verdict = request.onEvent?.(event) ?? 'more';
      } catch (err) {
        fail(
          err instanceof UpstreamFailure
            ? err
            : new UpstreamFailure('bad-answer', "the upstream's event stream could not be read"),
        );
        return;
      }
      if (verdict === 'done') streamDone();
    };

    const tooLarge = (): UpstreamFailure => answerTooLarge(request.maxBytes);
    /** Line ends made LF before the parser, which is quadratic on CRs (sse-line-ends.ts). */
    const lineEnds = new SseLineEnds();
    /** Small chunks of an unfinished line, fed together (sse-held-bytes.ts). */
    const held = new SseHeldBytes();
    const feed = (bytes: Buffer): void => {
      if ((!settled || late) && parser !== undefined && decoder !== undefined)
        parser.feed(lineEnds.normalize(decoder.write(bytes)));
    };

    /** One chunk of the answer's (decoded) bytes. */
    const take = (chunk: Buffer): void => {
      if (settled && !late) return;
      length += chunk.length;
      counted += chunk.length;
      if (counted > request.maxBytes) {
        overCap();
        return;
      }
      // after the response the bytes are no longer the caller's answer's
      const refusal = settled ? undefined : request.onChunk?.(chunk);
      if (refusal !== undefined) {
        fail(new UpstreamFailure('refused', refusal));
        return;
      }
      if (parser !== undefined && decoder !== undefined) {
        held.push(chunk, feed);
      } else {
        chunks.add(chunk);
      }
    };

    /** The answer's last (decoded) byte has been taken. */
    const finish = (): void => {
      if (head === undefined) return;
      if (settled) {
        // the events the stream ended with, after the response, for onLateEvent
        if (late && parser !== undefined && decoder !== undefined) {
          held.flush(feed);
          if (late) parser.feed(lineEnds.normalize(decoder.end()));
        }
        late = false;
        return;
      }
      if (parser !== undefined && decoder !== undefined) {
        held.flush(feed);
        if (settled) return;
        // no CR reaches the parser (a last lone CR is an LF already), so it holds no line back
        parser.feed(lineEnds.normalize(decoder.end()));
        if (!settled)
          succeed({ kind: 'events', head, done: false, bytes: length, lastEventId, retryMillis });
        return;
      }
      succeed({ kind: 'body', head, body: chunks.bytes() });
    };

    /**
     * A coded answer (RFC 9110 §8.4): no Accept-Encoding is sent, so any coding may come
     * (§12.5.3), as from a CDN in front of the upstream. The codings bundles are decoded with
     * (libs/http-body) are undone as the bytes arrive, SSE included, and the caps apply to the
     * decoded bytes; an unknown coding fails the exchange with its name.
     */
    const startDecoding = (codings: readonly ContentCoding[]): void => {
      const chain = codings.map((coding) => {
        const stage = contentDecoder(coding);
        stage.once('error', (err) => {
          const code = isZlibError(err) ? (err as { code?: unknown }).code : undefined;
          fail(
            new UpstreamFailure(
              'bad-answer',
              `the upstream's ${coding} data is corrupt or cut short` +
                (typeof code === 'string' ? ` (${code})` : ''),
            ),
          );
        });
        return stage;
      });
      chain.reduce((from, to) => from.pipe(to));
      const last = chain[chain.length - 1];
      last?.on('data', take);
      last?.once('end', finish);
      codingStages = chain;
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        clearTimeout(connectTimer);
        if (settled) c.abort(new Error('settled'));
      },
      onResponseStart(_c, statusCode, headers) {
        if (settled) return;
        head = {
          status: statusCode,
          mediaType: mediaTypeOf(firstHeader(headers['content-type'])),
          sessionId: firstHeader(headers['mcp-session-id']),
        };
        if (
          request.onEvent !== undefined &&
          statusCode >= 200 &&
          statusCode < 300 &&
          head.mediaType === 'text/event-stream'
        ) {
          decoder = new StringDecoder('utf8');
          parser = createParser({
            onEvent,
            // one event's lines, however they come (keep-alive comments between its data lines
            // included), are bounded as the answer is
            maxBufferSize: request.maxBytes,
            onError: (error) => {
              if (error.type === 'max-buffer-size-exceeded') overCap();
            },
            // A keep-alive comment ends a unit too: per-event caps must not add them up.
            onComment: () => {
              if (request.capScope === 'event') counted = 0;
            },
            onRetry: (millis) => {
              retryMillis = millis;
            },
          });
        }
        // only a stream has no last byte: any other answer (a JSON body, an error status) stays
        // bound to its end, or one that drips would hold the exchange for ever
        if (request.timeoutScope === 'head' && parser !== undefined) clearTimeout(deadlineTimer);
        let codings: ContentCoding[];
        try {
          codings = decodingOrder(firstHeader(headers['content-encoding']));
        } catch (err) {
          fail(
            new UpstreamFailure(
              'bad-answer',
              `the upstream's answer could not be decoded: ${err instanceof BodyDecodeError ? err.reason : 'bad content-encoding'}`,
            ),
          );
          return;
        }
        if (codings.length > 0) startDecoding(codings);
        request.onHead?.(head);
      },
      onResponseData(_c, chunk) {
        if (settled && !late) return;
        if (codingStages === undefined) {
          take(chunk);
          return;
        }
        received += chunk.length;
        if (request.capScope === 'total' && received > request.maxBytes) {
          overCap();
          return;
        }
        codingStages[0]?.write(chunk);
      },
      onResponseEnd() {
        ended = true;
        release();
        // The usual case: the stream ends right after the response. Without this the timer,
        // and everything this exchange's closures hold, would live on for the grace period.
        clearTimeout(graceTimer);
        if (codingStages === undefined) finish();
        else codingStages[0]?.end();
      },
      onResponseError(_c, err) {
        ended = true;
        late = false;
        release();
        clearTimeout(graceTimer);
        for (const stage of codingStages ?? []) stage.destroy();
        if (settled) return;
        // Reached, answering, then cut: the request may have run, so this is a broken answer,
        // never "could not be reached".
        fail(
          head === undefined
            ? failureBeforeHead(err, request)
            : new UpstreamFailure(
                'bad-answer',
                'the connection to the upstream closed before the answer was complete',
              ),
        );
      },
    };

    if (request.via !== undefined) request.headers.via = request.via;
    try {
      dispatcher.dispatch(
        {
          origin: request.url.origin,
          path: `${request.url.pathname}${request.url.search}`,
          method: request.method,
          headers: request.headers,
          body: request.body,
          headersTimeout: Math.max(1, request.timeoutMillis),
          bodyTimeout: request.timeoutScope === 'whole' ? Math.max(1, request.timeoutMillis) : 0,
        },
        handler,
      );
    } catch (err) {
      release();
      fail(failureBeforeHead(err instanceof Error ? err : new Error('dispatch'), request));
    }
  });
}
