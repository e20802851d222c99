import {
  BROKEN_CONNECTION_CODES,
  ChunkList,
  isJsonContentType,
  JsonDepthScanner,
} from '@app/http-body';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import type { AnswerBudget, BudgetClaim } from './answer-budget';
import type { CallCancellation } from './call-cancellation';
import type { ToolCallFailure } from './map-tool-response';

/** A Tool Service's complete answer. */
export interface ToolServiceAnswer {
  readonly status: number;
  readonly contentType: string;
  /** Content-Encoding as sent (repeated headers joined); undefined when absent. */
  readonly contentEncoding?: string;
  /** Retry-After as sent, read on a status ≥ 300 only; undefined when absent. */
  readonly retryAfter?: string;
  /** The body bytes as received (still encoded), joined. */
  readonly body: Buffer;
}

/** One POST to a Tool Service. */
export interface ToolServiceRequest {
  /** `scheme://host:port` of baseEndpoint. */
  readonly origin: string;
  /** baseEndpoint's path, then `/{toolName}`. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The whole exchange, connect to last byte, in ms. */
  readonly timeoutMillis: number;
  /** Cap on the bytes received (the caller caps decoded bytes again when it decodes). */
  readonly maxResponseBytes: number;
  /**
   * Aborting it ends the call at once: reason `'shutdown'` → a `shutdown` failure, any other
   * reason (the client went away, notifications/cancelled) → `cancelled`.
   */
  readonly signal?: CallCancellation;
  /**
   * Deepest nesting of a 2xx JSON answer without Content-Encoding, checked on the bytes as they
   * arrive: a deeper one ends the call at once (`too-deep`), unread, unjoined, undecoded.
   */
  readonly maxJsonDepth?: number;
  /** The shared answer budget and this call's claim on it; the caller releases the claim. */
  readonly budget?: { readonly pool: AnswerBudget; readonly claim: BudgetClaim };
}

/** The abort reason that marks the end of the shutdown grace period. */
export const SHUTDOWN_REASON = 'shutdown';

/** A header value as one string: repeated ones joined with ", " (RFC 9110 §5.3). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Network errors named in a failure: the service was not reached. */
const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * undici codes for an answer that is not valid HTTP/1.1 (llhttp's HPE_* parser errors come as
 * HTTPParserError with that code): the Tool Service answered, but wrongly, which is not the
 * same as being unreachable.
 */
const INVALID_ANSWER_CODES = new Set([
  'UND_ERR_HEADERS_OVERFLOW',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_INFO',
]);

function invalidAnswerCode(err: unknown): string | undefined {
  if (err instanceof undiciErrors.HTTPParserError) return err.code ?? 'HPE_INVALID';
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  return code.startsWith('HPE_') || INVALID_ANSWER_CODES.has(code) ? code : undefined;
}

class CallTimeout extends Error {}
class AnswerTooLarge extends Error {}
class OverBudget extends Error {}
class TooDeep extends Error {}
class CallAborted extends Error {
  constructor(readonly shutdown: boolean) {
    super('aborted');
  }
}

function failureOf(err: unknown, request: ToolServiceRequest): ToolCallFailure {
  if (err instanceof AnswerTooLarge)
    return { kind: 'too-large', maxBytes: request.maxResponseBytes };
  if (err instanceof OverBudget) return { kind: 'busy', limit: 'answers' };
  if (err instanceof TooDeep) return { kind: 'too-deep', limit: request.maxJsonDepth ?? 0 };
  if (err instanceof CallAborted)
    return err.shutdown ? { kind: 'shutdown' } : { kind: 'cancelled' };
  if (
    err instanceof CallTimeout ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError
  ) {
    return { kind: 'timeout', timeoutMillis: request.timeoutMillis };
  }
  if (err instanceof undiciErrors.ConnectTimeoutError)
    return { kind: 'connect', code: 'connect timeout' };
  const invalid = invalidAnswerCode(err);
  if (invalid !== undefined) return { kind: 'invalid-answer', code: invalid };
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && BROKEN_CONNECTION_CODES.has(code))
    return { kind: 'connect', code, mayHaveRun: true };
  return {
    kind: 'connect',
    code: typeof code === 'string' && CONNECT_ERROR_CODES.has(code) ? code : 'network error',
  };
}

/**
 * HTTP to Tool Services on undici's dispatch API: keep-alive connections, one timer per call
 * bounding the whole exchange, the answer collected as buffers and capped. This is the
 * leanest undici path (no stream or promise wrappers per call), which matters because every
 * tools/call pays for it (DESIGN "HTTP clients keep connections alive").
 */
export class ToolServiceClient {
  private readonly agent: Agent;

  /**
   * @param connectTimeoutMillis TCP connect bound (discovery.connectTimeoutMillis)
   * @param maxConnectionsPerOrigin open connections per Tool Service origin; more calls queue
   *   for one, within their own timeout (execution.maxConnectionsPerOrigin)
   */
  constructor(connectTimeoutMillis: number, maxConnectionsPerOrigin: number) {
    this.agent = new Agent({
      connect: { timeout: connectTimeoutMillis },
      connections: maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    });
  }

  /** Never rejects: an answer of any status, or the reason there is none. */
  post(request: ToolServiceRequest): Promise<ToolServiceAnswer | ToolCallFailure> {
    return new Promise((resolve) => {
      // kept so that one-byte chunks cost about what their bytes do (chunk-list.ts)
      const chunks = new ChunkList();
      let length = 0;
      let status = 0;
      let contentType = '';
      let contentEncoding: string | undefined;
      let retryAfter: string | undefined;
      let settled = false;
      let depth: JsonDepthScanner | undefined;
      let controller: Dispatcher.DispatchController | undefined;
      const { signal, budget } = request;
      const finish = (value: ToolServiceAnswer | ToolCallFailure): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.onAbort(undefined);
        resolve(value);
      };
      const fail = (err: Error): void => {
        if (controller !== undefined && !controller.aborted) controller.abort(err);
        finish(failureOf(err, request));
      };
      // The Tool Service request ends with the client's interest in it
      // (docs/operations.md §2 "Calls nobody waits for").
      if (signal?.aborted === true) {
        resolve(failureOf(new CallAborted(signal.reason === SHUTDOWN_REASON), request));
        return;
      }
      signal?.onAbort((reason) => fail(new CallAborted(reason === SHUTDOWN_REASON)));
      const timer = setTimeout(() => fail(new CallTimeout()), request.timeoutMillis);
      this.agent.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: 'POST',
          headers: request.headers,
          body: request.body,
          headersTimeout: request.timeoutMillis,
          bodyTimeout: request.timeoutMillis,
        },
        {
          onRequestStart(c) {
            controller = c;
            if (settled) c.abort(new CallTimeout());
          },
          onResponseStart(_c, statusCode, headers) {
            status = statusCode;
            const type = headers['content-type'];
            contentType = Array.isArray(type) ? (type[0] ?? '') : (type ?? '');
            contentEncoding = headerText(headers['content-encoding']);
            if (statusCode >= 300) retryAfter = headerText(headers['retry-after']);
            else if (
              request.maxJsonDepth !== undefined &&
              contentEncoding === undefined &&
              isJsonContentType(contentType)
            )
              depth = new JsonDepthScanner(request.maxJsonDepth);
          },
          onResponseData(_c, chunk) {
            if (depth?.exceeds(chunk) === true) {
              fail(new TooDeep());
              return;
            }
            length += chunk.length;
            if (length > request.maxResponseBytes) {
              fail(new AnswerTooLarge());
              return;
            }
            if (budget !== undefined && !budget.pool.take(budget.claim, chunk.length)) {
              fail(new OverBudget());
              return;
            }
            chunks.add(chunk);
          },
          onResponseEnd() {
            finish({
              status,
              contentType,
              contentEncoding,
              retryAfter,
              body: chunks.bytes(),
            });
          },
          onResponseError(_c, err) {
            const failure = failureOf(err, request);
            // The service answered and then the connection broke: it was reached, and the
            // call may have run, so this is a broken answer, never "could not be reached".
            finish(
              failure.kind === 'connect' && status !== 0
                ? { kind: 'invalid-answer', code: `answer cut short, ${failure.code}` }
                : failure,
            );
          },
        },
      );
    });
  }

  /** Cuts the connections (after the /mcp listener has drained). */
  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}
