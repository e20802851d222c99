import { AnswerStream } from '../answers/answer-stream';
import { PrecompressedBytes } from '../answers/gzip-splice';
import type { CallCancellation, IncomingHeaders } from '@app/execution';
import { acceptsEventStream, header, streamAnswer, type HttpAnswer } from '../answers/http-answer';

/**
 * The answer of a request that may relay upstream messages before its result
 * (docs/operations.md §10 "Relaying"): the plain answer when the result comes first; otherwise an
 * SSE answer that starts with the first relayed message and ends with the result. `done` runs once
 * the result is known. A request its client cancelled (`call` aborted with reason `cancelled`,
 * a notifications/cancelled) gets, when the client takes an event stream (`headers`' Accept),
 * an SSE answer that ends without a response (MCP 2025-11-25 "Cancellation": the receiver
 * should not send one); so does one whose session its client ended (`session-ended`: the SDK
 * servers close a terminated session's streams as they are).
 */
export async function streamWhenRelayed(
  answer: Promise<HttpAnswer>,
  stream: AnswerStream | undefined,
  done: () => void,
  call?: CallCancellation,
  headers?: IncomingHeaders,
): Promise<HttpAnswer> {
  if (stream === undefined)
    return answer.then(
      (result) => {
        done();
        return unanswered(call, headers) ? withoutResponse(new AnswerStream()) : result;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  const first = await Promise.race([answer, stream.first.then(() => undefined)]);
  if (first !== undefined) {
    done();
    return unanswered(call, headers) ? withoutResponse(stream) : first;
  }
  // Messages came first: answer with the stream; the result is its last message.
  void answer.then((result) => {
    done();
    if (unanswered(call, headers)) stream.close();
    else stream.end(unframe(bodyText(result.body)));
  });
  return streamAnswer(stream);
}

/**
 * Whether a call's response is not sent: its client cancelled it, or ended its session, and
 * takes an event stream. Read once the result is known, the Accept header only for such a call.
 */
function unanswered(
  call: CallCancellation | undefined,
  headers: IncomingHeaders | undefined,
): boolean {
  return (
    (call?.reason === 'cancelled' || call?.reason === 'session-ended') &&
    headers !== undefined &&
    acceptsEventStream(header(headers, 'accept'))
  );
}

/** An SSE answer that ends without a message: the response to a cancelled request, not sent. */
function withoutResponse(stream: AnswerStream): HttpAnswer {
  stream.close();
  return streamAnswer(stream);
}

/** An answer body as one text (a streamed call's last message is never large). */
function bodyText(body: HttpAnswer['body']): string {
  if (body === undefined || typeof body === 'string') return body ?? '';
  return body
    .map((part) =>
      typeof part === 'string'
        ? part
        : (part instanceof PrecompressedBytes ? part.raw : part).toString('utf8'),
    )
    .join('');
}

/** The JSON-RPC message inside a one-message answer body (JSON, or one SSE `message` event). */
const SSE_FRAME_START = 'event: message\ndata: ';

function unframe(body: string): string {
  return body.startsWith(SSE_FRAME_START) ? body.slice(SSE_FRAME_START.length, -2) : body;
}
