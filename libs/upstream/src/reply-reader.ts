import { MAX_PARSED_VALUES, textDepthExceeds, textValuesExceed } from '@app/http-body';
import type { ExchangeResult } from './http-exchange';
import {
  answerOf,
  errorOf,
  isResponse,
  isResponseTo,
  parseMessage,
  parseReply,
  type ParsedMessage,
  type RequestId,
} from './json-rpc';
import { listItemCount } from './list-items';
import {
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamAnswer,
  type UpstreamListCap,
} from './upstream-types';

/**
 * Reading an upstream's answer to one POST (docs/operations.md §10): the response to the
 * request's id out of a JSON body or an SSE stream, and what that answer means as an outcome.
 * Pure: the exchange itself is the connection's (upstream-connection.ts).
 */

/**
 * Deepest nesting of one upstream message: the Tool Service answer limit (MAX_ANSWER_DEPTH,
 * libs/execution/src/map-tool-response.ts) plus the JSON-RPC envelope. A deeper message is
 * refused before it is parsed: serializing it again would overflow the stack.
 */
export const MAX_MESSAGE_DEPTH = 129;

/** An upstream answer to a POST, read: the response to our id, if there was one. */
export interface Reply {
  readonly status: number;
  readonly sessionId?: string;
  readonly message?: JsonRpcMessage;
  /** The text of the message's `result` as the upstream wrote it, when parseReply cut it out. */
  readonly resultText?: string;
  /** Why there is no `message`, in words, for a bad-answer failure. */
  readonly problem?: string;
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

export function httpStatusFailure(status: number, what: string): UpstreamFailure {
  return new UpstreamFailure('http-status', `${what} (HTTP ${status})`, status);
}

/**
 * Most JSON values one upstream message may hold where no list cap counts its items (answers
 * routed to a client, messages on a call's stream or the GET stream): MAX_PARSED_VALUES.
 */
export const MAX_MESSAGE_VALUES = MAX_PARSED_VALUES;

/**
 * The JSON values a list page may hold per item it lists, beyond MAX_MESSAGE_VALUES: a page of
 * as many items as the cap allows (10,000 resources by default, or a raised tool cap) takes more
 * values than one message may, and one item takes far fewer than this (a tool with a large
 * schema, a few hundred). A page whose values pass its allowance is refused before it is parsed:
 * two entries carrying 2.6 million values (7.8 MB, under the answer cap) took ~900 MB and half a
 * second of the event loop at every pull (docs/operations.md §10 "Width").
 */
export const LIST_ITEM_VALUES = 64;

function tooManyValues(limit: number): UpstreamFailure {
  return new UpstreamFailure(
    'too-large',
    `the upstream's answer holds more than ${limit} JSON values`,
  );
}

/**
 * Refuses a message too deep, or over the list cap when one counts its items, or too wide: a
 * list page may hold LIST_ITEM_VALUES more values per item it lists than another message.
 */
function refuseShape(text: string, cap: UpstreamListCap | undefined): void {
  if (textDepthExceeds(text, MAX_MESSAGE_DEPTH)) throw tooDeep();
  let limit = MAX_MESSAGE_VALUES;
  if (cap !== undefined) {
    const items = listItemCount(text, cap.key, cap.limit);
    if (items > cap.limit) throw new UpstreamFailure('refused', cap.refusal);
    limit += items * LIST_ITEM_VALUES;
  }
  if (textValuesExceed(text, limit)) throw tooManyValues(limit);
}

export function tooDeep(): UpstreamFailure {
  return new UpstreamFailure(
    'too-deep',
    `the upstream's answer nests deeper than ${MAX_MESSAGE_DEPTH} levels`,
  );
}

/**
 * Whether a JSON object's text has a top-level `method` member (a request or a notification,
 * never a response), found without parsing it: one pass over the text, strings skipped, depth
 * counted, no recursion, so it is safe on a message too deep or too wide to parse. A key
 * written with escapes is not recognised (the message then counts as a response).
 */
export function namesMethod(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i + 1;
      let j = start;
      while (j < text.length && text.charCodeAt(j) !== 0x22)
        j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      i = j;
      if (depth !== 1 || j - start !== 6 || text.slice(start, j) !== 'method') continue;
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k] ?? '')) k++;
      if (text[k] === ':') return true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * One event of a request's SSE answer: the response to `id` (returned), or another message
 * (returned too, the caller tells them apart with isResponseTo). Every message on the answer
 * is refused unparsed when nested too deep or over the list cap. With `dropsMessages` (a
 * long-lived stream of notifications, a 2026 listen) a request or notification too deep or too
 * wide is dropped unparsed instead (undefined), as on the GET stream (docs/operations.md §10
 * "Nesting"): one bad notification must not end a stream that carries every later one. A
 * message too deep or wide that names no `method` may be the response: it still fails the
 * request.
 */
export function readAnswerEvent(
  data: string,
  listCap: UpstreamListCap | undefined,
  dropsMessages = false,
): ParsedMessage | undefined {
  try {
    refuseShape(data, listCap);
  } catch (err) {
    if (
      dropsMessages &&
      err instanceof UpstreamFailure &&
      (err.kind === 'too-deep' || err.kind === 'too-large') &&
      namesMethod(data)
    )
      return undefined;
    throw err;
  }
  const parsed = parseReply(data);
  if (parsed === undefined)
    throw new UpstreamFailure(
      'bad-answer',
      'the upstream sent a stream event that is not a JSON-RPC message',
    );
  return parsed;
}

/**
 * One message on a stream nobody waits a response on (the GET stream, a notification's
 * answer): undefined when it is nested too deep, holds too many values or is not JSON-RPC,
 * dropped unparsed.
 */
export function readStreamMessage(data: string): JsonRpcMessage | undefined {
  return textDepthExceeds(data, MAX_MESSAGE_DEPTH) || textValuesExceed(data, MAX_MESSAGE_VALUES)
    ? undefined
    : parseMessage(data);
}

/**
 * The answer to one POST as a Reply: the `streamed` response of an SSE answer, or the JSON body
 * read (for a request: the response to `id`, its result text kept; a transport-level JSON-RPC
 * error that names no request, on a non-2xx).
 */
export function readReply(
  result: ExchangeResult,
  id: RequestId | undefined,
  streamed: ParsedMessage | undefined,
  listCap?: UpstreamListCap,
): Reply {
  const { status, sessionId } = result.head;
  if (result.kind === 'events') {
    return streamed !== undefined
      ? { status, sessionId, message: streamed.message, resultText: streamed.resultText }
      : { status, sessionId, problem: "the upstream's event stream ended without the response" };
  }
  const text = result.body.toString('utf8');
  refuseShape(text, id === undefined ? undefined : listCap);
  if (text.trim() === '')
    return { status, sessionId, problem: 'the upstream answered with an empty body' };
  // A request's answer may carry its result as text to pass on (parseReply); others need not.
  const parsed = id === undefined ? undefined : parseReply(text);
  const message = id === undefined ? parseMessage(text) : parsed?.message;
  if (message === undefined)
    return { status, sessionId, problem: "the upstream's answer is not JSON-RPC" };
  if (id !== undefined && isResponseTo(message, id))
    return { status, sessionId, message, resultText: parsed?.resultText };
  // A transport-level rejection may not name the request (e.g. a notification's 4xx).
  if (!isSuccess(status) && isResponse(message) && 'error' in message)
    return { status, sessionId, message };
  return {
    status,
    sessionId,
    problem: "the upstream's answer is not the response to the request",
  };
}

/**
 * The outcome of an answer that is not the session or era case: the result or JSON-RPC error
 * as sent (any status), `http-status` for a non-2xx without a JSON-RPC error, `bad-answer`
 * for a 2xx that is not the response.
 */
export function plainOutcome(reply: Reply): UpstreamAnswer | UpstreamFailure {
  if (reply.message !== undefined) {
    const answer = answerOf(reply.message, reply.resultText);
    if (answer === undefined)
      return new UpstreamFailure('bad-answer', "the upstream's response is not valid JSON-RPC");
    if (isSuccess(reply.status) || answer.kind === 'error') return answer;
  }
  if (!isSuccess(reply.status))
    return httpStatusFailure(reply.status, 'the upstream answered without a JSON-RPC error');
  return new UpstreamFailure(
    'bad-answer',
    reply.problem ?? "the upstream's answer is not JSON-RPC",
  );
}

/** The error code of a reply's JSON-RPC error, if it carries one. */
export function errorCode(reply: Reply): number | undefined {
  return reply.message === undefined ? undefined : errorOf(reply.message)?.code;
}

/** A message accepted as a notification or response is (any 2xx); 404 on a session: it is gone. */
export function checkAccepted(reply: Reply, sessionId: string | undefined): void {
  if (isSuccess(reply.status)) return;
  if (reply.status === 404 && sessionId !== undefined)
    throw new UpstreamFailure('session-lost', 'the upstream no longer knows the session', 404);
  throw httpStatusFailure(reply.status, 'the upstream did not accept the message');
}
