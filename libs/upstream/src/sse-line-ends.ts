/** A CRLF or a lone CR: either ends an SSE line. */
const CR_LINE_END = /\r\n?/g;

/**
 * An upstream's SSE text with every line end made an LF, in one linear pass per chunk, before
 * the event parser (WHATWG HTML "Parsing an event stream": a line ends at CRLF, LF or a lone
 * CR). eventsource-parser searches for the next CR again from every line start of a chunk that
 * holds one, so a chunk of many short lines with one CR costs it time quadratic in the chunk: an
 * upstream's 128 KiB of blank lines ending in a CR held the event loop ~100 ms per read, within
 * every byte cap. A CR at the end of a chunk ends its line here; an LF that opens the next chunk
 * is then the rest of that CRLF and is dropped.
 */
export class SseLineEnds {
  /** The last text ended with a CR (made an LF). */
  private pendingCr = false;

  normalize(text: string): string {
    let out = text;
    if (this.pendingCr && out.length > 0) {
      this.pendingCr = false;
      if (out.charCodeAt(0) === 0x0a) out = out.slice(1);
    }
    if (out.indexOf('\r') === -1) return out;
    this.pendingCr = out.charCodeAt(out.length - 1) === 0x0d;
    return out.replace(CR_LINE_END, '\n');
  }
}
