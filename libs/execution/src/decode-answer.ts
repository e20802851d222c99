import {
  BodyDecodeError,
  BodyTooLargeError,
  decodeBuffer,
  decodeText,
  decodingOrder,
} from '@app/http-body';
import type { ToolCallFailure } from './map-tool-response';

/**
 * The text of an answer without Content-Encoding: UTF-8 for JSON and for types without a
 * charset (the hot path: no zlib, no TextDecoder beyond the shared UTF-8 one), else the
 * declared charset (docs/operations.md §7). An unknown charset is a failure with the reason.
 */
export function answerText(body: Buffer, contentType: string): string | ToolCallFailure {
  try {
    return decodeText(body, contentType);
  } catch (err) {
    if (err instanceof BodyDecodeError) return { kind: 'undecodable', reason: err.reason };
    throw err;
  }
}

/**
 * The text of an answer with a Content-Encoding: gzip, deflate and br (stacked ones undone in
 * reverse order) are decoded as streams, their output capped at `maxBytes` while it is
 * produced, so a compression bomb fails as too large without being inflated; `identity` is
 * no decoding. An unknown or corrupt encoding is a failure naming the encoding.
 *
 * @param maxBytes the tool answer cap (mcp.execution.maxResponseBytes), applied to decoded bytes
 */
export async function decodeAnswer(
  body: Buffer,
  contentType: string,
  contentEncoding: string,
  maxBytes: number,
): Promise<string | ToolCallFailure> {
  try {
    const codings = decodingOrder(contentEncoding);
    // an empty body (a 204 that names its encoding anyway) decodes to nothing
    const bytes =
      codings.length === 0 || body.length === 0
        ? body
        : await decodeBuffer(body, codings, maxBytes);
    return answerText(bytes, contentType);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { kind: 'too-large', maxBytes, decoded: true };
    if (err instanceof BodyDecodeError) return { kind: 'undecodable', reason: err.reason };
    throw err;
  }
}
