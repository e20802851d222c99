/**
 * The messages of one SSE answer, in order: notifications and relayed requests of a call in
 * flight, then its response (docs/operations.md §10 "Relaying"). A producer pushes JSON texts and
 * ends with the last one; the writer iterates. Nothing is buffered beyond what the writer has not
 * taken yet, and the writer takes a message only once the socket drained (writeStream): relayed
 * messages a client does not read may hold at most `maxQueuedBytes` (`mcp.listen.maxQueuedBytes`),
 * past which the answer is cut, its response destroyed, and so the call cancelled as for a client
 * that went away. The last message (the result, bounded by the answer caps) always fits, and so
 * does one message larger than the cap when nothing is queued: a client that reads gets it.
 */
export class AnswerStream implements AsyncIterable<string> {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private ended = false;
  private wake?: () => void;
  private firstPushed?: () => void;
  private readonly cutListeners: (() => void)[] = [];
  private wasCut = false;
  /** Resolves when the first message is pushed. */
  readonly first: Promise<void> = new Promise((resolve) => (this.firstPushed = resolve));

  constructor(private readonly maxQueuedBytes = Number.POSITIVE_INFINITY) {}

  /** Adds one JSON-RPC message (JSON text). Ignored after `end`. */
  push(json: string): void {
    if (this.ended) return;
    // an empty queue is a client that keeps up (the writer took everything): one message larger
    // than the cap goes (it is bounded by the answer caps), the next one waits behind it
    if (this.queuedBytes > 0 && this.queuedBytes + json.length > this.maxQueuedBytes) {
      this.cut();
      return;
    }
    this.enqueue(json);
  }

  /** Adds the last message and closes the stream. */
  end(json: string): void {
    if (this.ended) return;
    this.enqueue(json);
    this.ended = true;
    this.wake?.();
  }

  /**
   * Closes the stream without a last message: a request its client cancelled gets no response
   * (MCP 2025-11-25 "Cancellation": the receiver should not send one).
   */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake?.();
  }

  /** Runs `listener` when the stream is cut (at once when it already was). */
  onCut(listener: () => void): void {
    if (this.wasCut) listener();
    else this.cutListeners.push(listener);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        this.queuedBytes -= next.length;
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private enqueue(json: string): void {
    this.queue.push(json);
    this.queuedBytes += json.length;
    this.firstPushed?.();
    this.firstPushed = undefined;
    this.wake?.();
  }

  /** The client does not read: drop what is queued, end, and have the writer destroy the response. */
  private cut(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.ended = true;
    this.firstPushed?.();
    this.firstPushed = undefined;
    this.wasCut = true;
    this.wake?.();
    for (const listener of this.cutListeners.splice(0)) listener();
  }
}
