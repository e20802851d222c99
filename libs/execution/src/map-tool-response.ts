import { isJsonContentType, textDepthExceeds } from '@app/http-body';
import { compactJson } from './compact-json';
import type { CallToolResult } from './call-tool-result';
import { redactErrorText } from './redact-error-text';

/**
 * Deepest nesting accepted in a JSON answer, as for requests
 * (docs/operations.md §2 "Calls nobody waits for").
 */
export const MAX_ANSWER_DEPTH = 128;
/**
 * JSON answers up to this many characters are parsed to check they are JSON; larger ones are
 * checked for nesting only and forwarded as the text they are.
 */
export const PARSED_ANSWER_MAX_CHARS = 1024 * 1024;
import { retryAfterMeta, retryAfterText, type RetryAfter } from './retry-after';

/** A finished HTTP exchange with a Tool Service, as seen by the gateway. */
export interface ToolHttpResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** A valid Retry-After the answer carried (see parseRetryAfter); reported on 4xx/5xx only. */
  readonly retryAfter?: RetryAfter;
}

/** Why a call produced no usable HTTP answer. */
export type ToolCallFailure =
  | { readonly kind: 'timeout'; readonly timeoutMillis: number }
  /**
   * No answer came. `mayHaveRun`: a connection was open when it broke (reset, closed by the
   * service), so the request may have reached the service; otherwise it was never reached.
   */
  | { readonly kind: 'connect'; readonly code: string; readonly mayHaveRun?: boolean }
  | { readonly kind: 'too-large'; readonly maxBytes: number; readonly decoded?: boolean }
  /** The Tool Service answered with bytes that are not valid HTTP (a parser error code). */
  | { readonly kind: 'invalid-answer'; readonly code: string }
  /** An answer whose content-encoding or charset cannot be read; `reason` names which. */
  | { readonly kind: 'undecodable'; readonly reason: string }
  /**
   * Refused or ended to protect the gateway: `answers` when the bytes of answers in flight
   * reached execution.maxInFlightAnswerBytes, `calls` when the bundle had
   * execution.maxConcurrentCallsPerBundle calls running.
   */
  | { readonly kind: 'busy'; readonly limit: 'answers' | 'calls' }
  /** For `waitedMs` (its timeout) the caller had `share` other calls to this bundle running (CallerShares). */
  | {
      readonly kind: 'busy';
      readonly limit: 'caller';
      readonly share: number;
      readonly waitedMs: number;
    }
  /** The client cancelled (notifications/cancelled) or went away; nobody waits for the result. */
  | { readonly kind: 'cancelled' }
  /** The gateway's shutdown grace period ended while the call ran. */
  | { readonly kind: 'shutdown' }
  /** A 2xx JSON answer nested deeper than `limit` levels, refused while it arrived. */
  | { readonly kind: 'too-deep'; readonly limit: number };

function textResult(
  text: string,
  elapsedMs: number,
  isError: boolean,
  retryAfter?: RetryAfter,
): CallToolResult {
  const _meta =
    retryAfter === undefined
      ? { searchTime: elapsedMs }
      : { searchTime: elapsedMs, ...retryAfterMeta(retryAfter) };
  const content = [{ type: 'text', text, _meta }] as const;
  return isError ? { content, isError: true } : { content };
}

const HTML_MIME = new Set(['text/html', 'application/xhtml+xml']);
const HTML_MARKUP = /<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>]|title[\s>])/i;

/** An error page from a proxy or framework, whatever its Content-Type says. */
function looksLikeHtml(contentType: string, body: string): boolean {
  const mime = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return HTML_MIME.has(mime) || HTML_MARKUP.test(body.slice(0, 4096));
}

/**
 * The Tool Service's own error text, bounded, with HTML pages left out (B18) and anything
 * that looks like an address or credential masked.
 */
function errorExcerpt(response: ToolHttpResponse, maxChars: number): string {
  const body = response.body.trim();
  if (body === '') return '';
  if (looksLikeHtml(response.contentType, body)) return ' (an HTML error page, not shown)';
  let text = body;
  if (isJsonContentType(response.contentType) && !textDepthExceeds(body, MAX_ANSWER_DEPTH)) {
    try {
      JSON.parse(body);
      text = compactJson(body);
    } catch {
      // keep the raw text
    }
  }
  // Masked before it is cut, so a cut can never leave half an address behind.
  const oneLine = redactErrorText(text.replace(/\s+/g, ' '));
  return `: ${oneLine.length > maxChars ? `${oneLine.slice(0, maxChars)}…` : oneLine}`;
}

/**
 * The compact text of an answer that names no Content-Type but is a JSON object or array
 * (contract §10: such an answer goes on as compact JSON; a framework that writes JSON without
 * the header is common); undefined for anything else, which goes on as it is. An answer that
 * names another type (text/plain) is the Tool Service's text, kept as sent; one over
 * PARSED_ANSWER_MAX_CHARS is not parsed to find out.
 */
export function untypedJson(response: ToolHttpResponse): string | undefined {
  const { body } = response;
  if (response.contentType.trim() !== '' || body.length > PARSED_ANSWER_MAX_CHARS) return undefined;
  const first = body.trimStart().charCodeAt(0);
  if (first !== 0x7b && first !== 0x5b) return undefined;
  if (textDepthExceeds(body, MAX_ANSWER_DEPTH)) return undefined;
  try {
    JSON.parse(body);
  } catch {
    return undefined;
  }
  return compactJson(body);
}

/**
 * Turns a Tool Service answer into a CallToolResult (contract §10, cases B18):
 * - 2xx JSON → compact JSON text; a 2xx JSON body of up to 1 MiB that does not parse, or one
 *   nested deeper than 128 levels → isError (larger bodies are not parsed, only compacted);
 * - other 2xx → the body text as is ("" for 204), but a JSON object or array with no
 *   Content-Type at all → compact JSON text (untypedJson);
 * - 3xx (never followed), 4xx, 5xx → isError with the status and the service's short error
 *   text, masked; a 5xx body is left out when the bundle's `serverErrorBody` is `hide`; on
 *   4xx/5xx a valid Retry-After is added to the text and to `content[0]._meta`.
 */
export function mapToolResponse(
  toolName: string,
  response: ToolHttpResponse,
  elapsedMs: number,
  maxErrorChars: number,
  serverErrorBody: 'hide' | 'show' = 'show',
): CallToolResult {
  const { status } = response;
  if (status >= 200 && status <= 299) {
    if (!isJsonContentType(response.contentType) || response.body === '') {
      return textResult(untypedJson(response) ?? response.body, elapsedMs, false);
    }
    if (textDepthExceeds(response.body, MAX_ANSWER_DEPTH)) {
      // Refused before JSON.parse: megabytes of nested brackets would stall every caller.
      return textResult(
        `Tool ${toolName} failed: the Tool Service answered HTTP ${status} with JSON nested deeper than ${MAX_ANSWER_DEPTH} levels.`,
        elapsedMs,
        true,
      );
    }
    // A large answer is not parsed just to be checked: its values would cost several times its
    // size in heap for every call in flight (docs/operations.md §2). It goes on as text.
    if (response.body.length <= PARSED_ANSWER_MAX_CHARS) {
      try {
        JSON.parse(response.body);
      } catch {
        return textResult(
          `Tool ${toolName} failed: the Tool Service answered HTTP ${status} with a body that is not valid JSON.`,
          elapsedMs,
          true,
        );
      }
    }
    return textResult(compactJson(response.body), elapsedMs, false);
  }
  if (status >= 300 && status <= 399) {
    return textResult(
      `Tool ${toolName} failed: the Tool Service answered HTTP ${status} (a redirect, which the gateway does not follow).`,
      elapsedMs,
      true,
    );
  }
  const side = status >= 500 ? 'a server error' : 'a client error';
  const excerpt =
    status >= 500 && serverErrorBody === 'hide' ? '' : errorExcerpt(response, maxErrorChars);
  // docs/operations.md §7 "Retry-After": the delay is reported, never waited for (no sleep, no
  // retry here)
  const { retryAfter } = response;
  const when = retryAfter === undefined ? '' : `; ${retryAfterText(retryAfter)}`;
  return textResult(
    `Tool ${toolName} failed: the Tool Service answered HTTP ${status} (${side}${when})${excerpt}`,
    elapsedMs,
    true,
    retryAfter,
  );
}

/** A call that got no usable answer: timeout, connection failure, oversized, malformed or unreadable answer. */
export function mapToolFailure(
  toolName: string,
  failure: ToolCallFailure,
  elapsedMs: number,
): CallToolResult {
  switch (failure.kind) {
    case 'timeout':
      return textResult(
        `Tool ${toolName} failed: no answer within its timeout of ${failure.timeoutMillis} ms; the call was abandoned. ` +
          'It may still have run on the Tool Service; check before retrying a tool that changes data.',
        elapsedMs,
        true,
      );
    case 'connect':
      return textResult(
        failure.mayHaveRun === true
          ? `Tool ${toolName} failed: its Tool Service closed the connection without answering (${failure.code}). ` +
              'It may still have run; check before retrying a tool that changes data.'
          : `Tool ${toolName} failed: its Tool Service could not be reached (${failure.code}). Try again later.`,
        elapsedMs,
        true,
      );
    case 'too-large':
      return textResult(
        `Tool ${toolName} failed: the Tool Service's answer exceeded ${failure.maxBytes} bytes${failure.decoded === true ? ' once decoded' : ''}.`,
        elapsedMs,
        true,
      );
    case 'undecodable':
      return textResult(
        `Tool ${toolName} failed: the Tool Service's answer could not be read: ${failure.reason}.`,
        elapsedMs,
        true,
      );
    case 'busy':
      return textResult(
        failure.limit === 'answers'
          ? `Tool ${toolName} failed: the gateway is busy (too many large answers in flight, or too many of this caller's); try again shortly.`
          : failure.limit === 'caller'
            ? `Tool ${toolName} failed: not sent: for ${failure.waitedMs} ms this caller had ${failure.share} other calls to its Tool Service running, its share (execution.maxConcurrentCallsPerCaller).`
            : `Tool ${toolName} failed: the gateway is busy (too many calls to its Tool Service in flight); try again shortly.`,
        elapsedMs,
        true,
      );
    case 'cancelled':
      return textResult(
        `Tool ${toolName} was cancelled: the client cancelled the request or went away.`,
        elapsedMs,
        true,
      );
    case 'shutdown':
      return textResult(
        `Tool ${toolName} failed: the gateway is shutting down and abandoned the call, which may still have run on the Tool Service. Try again.`,
        elapsedMs,
        true,
      );
    case 'too-deep':
      return textResult(
        `Tool ${toolName} failed: the Tool Service answered HTTP 200 with JSON nested deeper than ${failure.limit} levels.`,
        elapsedMs,
        true,
      );
    case 'invalid-answer':
      return textResult(
        `Tool ${toolName} failed: its Tool Service sent an answer that is not valid HTTP (${failure.code}).`,
        elapsedMs,
        true,
      );
  }
}
