import { SseComment, type FrameSource, type SseFrame } from '../answers/sse-frame';

/** Bytes a frame is counted for in the queue: its text (UTF-16 length, near its UTF-8 size). */
function frameSize(frame: SseFrame): number {
  return typeof frame === 'string' ? frame.length : frame.text.length;
}

/**
 * The frames of one long-lived notification stream (a 2026 `subscriptions/listen` or a 2025
 * session's GET stream; docs/operations.md §11 "Notification streams"), in order, for the /mcp
 * writer to iterate. Producers push until `end`; frames pushed after it are dropped. Unlike
 * AnswerStream it has no result to wait for: it lives until the client closes it or the gateway
 * ends it.
 *
 * The writer takes a frame only when the socket has drained (writeStream honours `write()`
 * returning false), so frames a client does not read wait here: once they hold more than
 * `maxQueuedBytes` the stream is cut (`onOverflow`, then the writer destroys the response),
 * so a client that stops reading costs at most that much memory (docs/operations.md,
 * "Notification streams").
 */
export class NotificationStream implements FrameSource {
  private readonly queue: SseFrame[] = [];
  private queuedBytes = 0;
  private ended = false;
  private wake?: () => void;
  private readonly cutListeners: (() => void)[] = [];
  private wasCut = false;

  constructor(
    private readonly maxQueuedBytes = Number.POSITIVE_INFINITY,
    private readonly onOverflow?: () => void,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  /** Bytes queued and not yet taken by the writer. */
  get queued(): number {
    return this.queuedBytes;
  }

  /** Adds one JSON-RPC message (JSON text, no line break). */
  push(json: string): void {
    this.enqueue(json);
  }

  /** Adds a comment frame (a keep-alive). */
  comment(text: string): void {
    this.enqueue(new SseComment(text));
  }

  /** Ends the stream after what is queued (and `last`, when given). Idempotent. */
  end(last?: string): void {
    if (this.ended) return;
    if (last !== undefined) this.queue.push(last);
    this.ended = true;
    this.wake?.();
  }

  /**
   * Ends the stream now, dropping what is queued, and tells the writer to destroy the
   * response (an abrupt end: wire notes §2.8, the client may reconnect). Idempotent.
   */
  cut(): void {
    if (this.ended) return;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.ended = true;
    this.wasCut = true;
    this.wake?.();
    for (const listener of this.cutListeners.splice(0)) listener();
  }

  /** Runs `listener` when the stream is cut (at once when it already was). */
  onCut(listener: () => void): void {
    if (this.wasCut) listener();
    else this.cutListeners.push(listener);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SseFrame> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        this.queuedBytes -= frameSize(next);
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private enqueue(frame: SseFrame): void {
    if (this.ended) return;
    const size = frameSize(frame);
    // an empty queue is a client that keeps up: one frame larger than the cap goes (each is
    // bounded where it is made: an upstream's message by its answer cap), the next waits behind it
    if (this.queuedBytes > 0 && this.queuedBytes + size > this.maxQueuedBytes) {
      this.cut();
      this.onOverflow?.();
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += size;
    this.wake?.();
  }
}
