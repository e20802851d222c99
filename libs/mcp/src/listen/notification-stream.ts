import { SseComment, type SseFrame } from '../http/sse-frame';

/**
 * The frames of one long-lived notification stream (a 2026 `subscriptions/listen` or a 2025
 * session's GET stream; issue 11 §6), in order, for the /mcp writer to iterate. Producers push
 * until `end`; frames pushed after it are dropped. Unlike AnswerStream it has no result to
 * wait for: it lives until the client closes it or the gateway ends it.
 */
export class NotificationStream implements AsyncIterable<SseFrame> {
  private readonly queue: SseFrame[] = [];
  private ended = false;
  private wake?: () => void;

  get isEnded(): boolean {
    return this.ended;
  }

  /** Adds one JSON-RPC message (JSON text, no line break). */
  push(json: string): void {
    if (this.ended) return;
    this.queue.push(json);
    this.wake?.();
  }

  /** Adds a comment frame (a keep-alive). */
  comment(text: string): void {
    if (this.ended) return;
    this.queue.push(new SseComment(text));
    this.wake?.();
  }

  /** Ends the stream after what is queued (and `last`, when given). Idempotent. */
  end(last?: string): void {
    if (this.ended) return;
    if (last !== undefined) this.queue.push(last);
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SseFrame> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
