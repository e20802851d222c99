/**
 * The messages of one SSE answer, in order: notifications and relayed requests of a call in
 * flight, then its response (issue 10 §5). A producer pushes JSON texts and ends with the
 * last one; the writer iterates. Nothing is buffered beyond what the writer has not taken yet.
 */
export class AnswerStream implements AsyncIterable<string> {
  private readonly queue: string[] = [];
  private ended = false;
  private wake?: () => void;
  private firstPushed?: () => void;
  /** Resolves when the first message is pushed. */
  readonly first: Promise<void> = new Promise((resolve) => (this.firstPushed = resolve));

  /** Adds one JSON-RPC message (JSON text). Ignored after `end`. */
  push(json: string): void {
    if (this.ended) return;
    this.queue.push(json);
    this.firstPushed?.();
    this.firstPushed = undefined;
    this.wake?.();
  }

  /** Adds the last message and closes the stream. */
  end(json: string): void {
    this.push(json);
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
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
