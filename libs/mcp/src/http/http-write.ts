import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonRpcCode } from '@app/wire';
import {
  acceptsGzip,
  gzipParts,
  hasPrecompressed,
  PrecompressedBytes,
  type BodyPart,
} from '../answers/gzip-splice';
import { errorEnvelope, type HttpAnswer } from '../answers/http-answer';
import { frameText, type FrameSource } from '../answers/sse-frame';

/** Strict UTF-8: invalid bytes are a parse error, never silently replaced (contract §10). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The body as strict UTF-8; null when the bytes are not UTF-8 (a parse error downstream). */
export function decodeBody(chunks: readonly Buffer[], length: number): string | null {
  try {
    return UTF8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
  } catch {
    return null;
  }
}

/**
 * Writes an answer; a body given as parts (tools/list) is written part by part, unjoined, and
 * gzip-encoded from its precompressed part when the request accepts gzip
 * (docs/operations.md §2 "Compressed lists").
 */
export function write(res: ServerResponse, answer: HttpAnswer, request?: IncomingMessage): void {
  const { body } = answer;
  if (answer.stream !== undefined) {
    void writeStream(res, answer, answer.stream);
  } else if (body === undefined) {
    res.writeHead(answer.status, answer.headers).end();
  } else if (typeof body === 'string') {
    res
      .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) })
      .end(body);
  } else if (hasPrecompressed(body)) {
    if (request !== undefined && acceptsGzip(request.headers)) {
      const { buffers, length } = gzipParts(body);
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-encoding': 'gzip',
        vary: varyWithAcceptEncoding(res),
        'content-length': length,
      });
      for (const b of buffers) res.write(b);
      res.end();
    } else {
      writeParts(res, answer, body, { vary: varyWithAcceptEncoding(res) });
    }
  } else {
    writeParts(res, answer, body, {});
  }
}

/**
 * Writes an SSE answer event by event as its messages come; stops when the client has gone
 * (the call's cancellation then ends the producer). Honours backpressure: after a `write()`
 * that returns false the next frame is taken only once the socket drains, so frames a client
 * does not read wait in the producer, which bounds them (NotificationStream); a producer that
 * cuts the stream has the response destroyed. Resolves when the stream is done.
 */
export async function writeStream(
  res: ServerResponse,
  answer: HttpAnswer,
  stream: FrameSource,
): Promise<void> {
  let cut = false;
  stream.onCut?.(() => {
    cut = true;
    res.destroy();
  });
  res.writeHead(answer.status, answer.headers);
  res.flushHeaders();
  for await (const frame of stream) {
    if (res.destroyed || res.writableEnded) break;
    if (!res.write(frameText(frame))) await drained(res);
  }
  if (!cut && !res.writableEnded) res.end();
}

/** Resolves when the response can take more (drain) or is gone (close). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** `Vary` for an answer whose encoding depends on Accept-Encoding, keeping a `Vary: Origin` set for CORS. */
function varyWithAcceptEncoding(res: ServerResponse): string {
  const set = res.getHeader('vary');
  return set === undefined ? 'accept-encoding' : `${String(set)}, accept-encoding`;
}

function writeParts(
  res: ServerResponse,
  answer: HttpAnswer,
  parts: readonly BodyPart[],
  extra: Record<string, string>,
): void {
  let length = 0;
  for (const part of parts)
    length +=
      typeof part === 'string'
        ? Buffer.byteLength(part)
        : part instanceof PrecompressedBytes
          ? part.raw.length
          : part.length;
  res.writeHead(answer.status, { ...answer.headers, ...extra, 'content-length': length });
  for (const part of parts) res.write(part instanceof PrecompressedBytes ? part.raw : part);
  res.end();
}

/** A transport-level refusal (403, 404, 405, 413, 500, 503) as a JSON-RPC error without id. */
export function plainError(
  status: number,
  message: string,
  extra: Record<string, string> = {},
): HttpAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...extra },
    body: errorEnvelope(
      null,
      status >= 500 ? JsonRpcCode.InternalError : JsonRpcCode.ServerError,
      message,
    ),
  };
}
