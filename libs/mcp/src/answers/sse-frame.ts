/** An SSE comment line (`: text`): a keep-alive that carries no message (wire notes §1.2). */
export class SseComment {
  constructor(readonly text: string) {}
}

/** One frame of an SSE answer: a JSON-RPC message (JSON text without line breaks) or a comment. */
export type SseFrame = string | SseComment;

/** The bytes of one frame: a `message` event, or a comment line. */
export function frameText(frame: SseFrame): string {
  return typeof frame === 'string' ? `event: message\ndata: ${frame}\n\n` : `: ${frame.text}\n\n`;
}

/**
 * The frames of an SSE answer, in order. A producer that can give up on its client (a
 * notification stream whose client stopped reading, or whose token expired) offers `onCut`:
 * the writer then destroys the response at once instead of ending it after what is queued.
 */
export interface FrameSource extends AsyncIterable<SseFrame> {
  onCut?(listener: () => void): void;
}
