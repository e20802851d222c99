/** Chunks under this many bytes without a line end are held instead of fed one by one. */
const SMALL_CHUNK_BYTES = 4096;
/** The most bytes held before they are fed. */
const HELD_BYTES = 64 * 1024;

function endsALine(chunk: Buffer): boolean {
  return chunk.indexOf(0x0a) !== -1 || chunk.indexOf(0x0d) !== -1;
}

/**
 * The small chunks of an upstream's SSE answer that end no line, held until one does (or 64 KiB
 * are held) and then fed to the event parser at once. eventsource-parser keeps each chunk of an
 * unfinished line as a string of its own, so an upstream sending a 3 MiB line one byte per chunk
 * (under every byte cap) took ~160 MB of the gateway's memory; held here they cost what their
 * bytes do. An event ends with a line end, which is fed at once: nothing is delayed.
 */
export class SseHeldBytes {
  private held: Buffer | undefined;
  private length = 0;

  /** Feeds `chunk` (after what was held), or holds it. */
  push(chunk: Buffer, feed: (bytes: Buffer) => void): void {
    if (chunk.length < SMALL_CHUNK_BYTES && !endsALine(chunk)) {
      if (this.length + chunk.length > HELD_BYTES) this.flush(feed);
      this.held ??= Buffer.allocUnsafe(HELD_BYTES);
      chunk.copy(this.held, this.length);
      this.length += chunk.length;
      return;
    }
    this.flush(feed);
    feed(chunk);
  }

  /** Feeds what is held (the buffer is reused: `feed` must be done with the bytes on return). */
  flush(feed: (bytes: Buffer) => void): void {
    if (this.held === undefined || this.length === 0) return;
    const bytes = this.held.subarray(0, this.length);
    this.length = 0;
    feed(bytes);
  }
}
