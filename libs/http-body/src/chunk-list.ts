/** Chunks under this many bytes are copied together instead of being kept one by one. */
const SMALL_CHUNK_BYTES = 4096;
/**
 * The buffers small chunks are copied into: the first is small (a body of two or three small
 * chunks — a status line's write, then the rest — is most of what arrives in pieces), each next
 * one twice the last, up to 64 KiB, so bookkeeping stays under 3 % of the bytes from the first.
 */
const FIRST_STAGING_BYTES = 4096;
const MAX_STAGING_BYTES = 64 * 1024;

/**
 * The chunks of one body, joined at its end. Each kept chunk costs a Buffer object and an
 * array slot (about 100 bytes) beside its payload, so a peer that sends a body one byte per
 * chunk would make every byte cost a hundred, past any cap that counts payload bytes only:
 * small chunks after the first are therefore copied into 64 KiB buffers, and the bookkeeping
 * stays a small share of the payload whatever the chunking. A body in one chunk (most answers)
 * is kept as it came, uncopied.
 */
export class ChunkList {
  private readonly parts: Buffer[] = [];
  private staging: Buffer | undefined;
  private staged = 0;
  private nextStaging = FIRST_STAGING_BYTES;
  /** The bytes added so far. */
  length = 0;

  add(chunk: Buffer): void {
    this.length += chunk.length;
    if (
      chunk.length >= SMALL_CHUNK_BYTES ||
      (this.parts.length === 0 && this.staging === undefined)
    ) {
      this.flush();
      this.parts.push(chunk);
      return;
    }
    if (this.staging === undefined || this.staged + chunk.length > this.staging.length) {
      this.flush();
      this.staging = Buffer.allocUnsafe(Math.max(this.nextStaging, chunk.length));
      this.nextStaging = Math.min(this.nextStaging * 2, MAX_STAGING_BYTES);
    }
    chunk.copy(this.staging, this.staged);
    this.staged += chunk.length;
  }

  /** The body's bytes, in one buffer. */
  bytes(): Buffer {
    this.flush();
    return this.parts.length === 1
      ? (this.parts[0] as Buffer)
      : Buffer.concat(this.parts, this.length);
  }

  /** How many buffers are kept (what a body costs beside its bytes). */
  get kept(): number {
    return this.parts.length + (this.staging === undefined ? 0 : 1);
  }

  private flush(): void {
    if (this.staging !== undefined && this.staged > 0)
      this.parts.push(this.staging.subarray(0, this.staged));
    this.staging = undefined;
    this.staged = 0;
  }
}
