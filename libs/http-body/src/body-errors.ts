/** Which bytes went over a cap: those received on the wire, or those a decoder produced. */
export type BodyStage = 'received' | 'decoded';

/**
 * A body went over its byte cap (maxManifestBytes, the tool answer cap). Raised while the
 * bytes arrive or are decoded, so an oversized body (a gzip bomb included) is never held whole.
 */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';

  constructor(
    readonly stage: BodyStage,
    /** The cap, in bytes. */
    readonly maxBytes: number,
  ) {
    super(`more than ${maxBytes} bytes ${stage}`);
  }
}

/**
 * A body that cannot be turned into its bytes: an unsupported or malformed Content-Encoding,
 * or compressed data that is corrupt or cut short. `reason` is safe to show (it names the
 * encoding, never any of the body's bytes).
 */
export class BodyDecodeError extends Error {
  override readonly name = 'BodyDecodeError';

  constructor(readonly reason: string) {
    super(reason);
  }
}
