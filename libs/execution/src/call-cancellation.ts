/**
 * Why a call was cancelled: its client went away or cancelled it, the gateway shut down, or
 * (`answer-undelivered`) the upstream did not take the client's answer to the request it sent
 * during the call, so the call could only wait for the upstream to give up
 * (docs/operations.md §10 "Relaying"), or (`input-overflow`) the upstream sent more requests for
 * the client's input than one held call may keep (docs/operations.md §11 "Multi round-trip"), or
 * (`credential-expired`) the caller's token expired while the call waited for the client's
 * input, and no fresher one came with the answer (docs/security.md "Answers to relayed requests"),
 * or (`session-ended`) the 2025 session the call was made on ended (DELETE /mcp, on any replica):
 * nothing can answer a request put to its client any more, nor read its result
 * (docs/operations.md §9 "Ending a session"), or (`session-expired`) that session's id expired
 * while the call waited for its client's answer, which can no longer come (its POST is 404).
 */
export type CancelReason =
  | 'client-closed'
  | 'cancelled'
  | 'shutdown'
  | 'answer-undelivered'
  | 'input-overflow'
  | 'credential-expired'
  | 'session-ended'
  | 'session-expired';

/**
 * The cancellation of one call in flight: one per request on the hot path, so a plain object
 * with one listener slot rather than an AbortController (an EventTarget, measured slower and
 * heavier at thousands of calls a second). Aborting twice is a no-op.
 */
export class CallCancellation {
  private abortReason?: CancelReason;
  private listener?: (reason: CancelReason) => void;

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  get reason(): CancelReason | undefined {
    return this.abortReason;
  }

  /** Aborts the call: the listener, if any, runs once with the reason. */
  abort(reason: CancelReason): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.(reason);
  }

  /**
   * Sets the one listener (a later call replaces it); `undefined` removes it. On a cancellation
   * already aborted the listener runs at once, with the reason: a call cancelled before a part
   * of it set its listener (a client gone while its request was being authenticated) ends that
   * part too, instead of leaving it to wait for an abort that already happened.
   */
  onAbort(listener: ((reason: CancelReason) => void) | undefined): void {
    const reason = this.abortReason;
    if (reason !== undefined) {
      listener?.(reason);
      return;
    }
    this.listener = listener;
  }
}

/**
 * Cancellations for parts of one call that run at once (a fan-out to several upstreams): a
 * CallCancellation has one listener slot, which each part would take from the one before (and
 * clear when it ends, leaving the others deaf to the call's end). Each part gets its own, all
 * aborted with the call; `release` gives the call's slot back once every part has ended.
 */
export function fanOut(
  call: CallCancellation | undefined,
  count: number,
): { readonly parts: CallCancellation[]; readonly release: () => void } {
  const parts = Array.from({ length: count }, () => new CallCancellation());
  if (call === undefined) return { parts, release: () => undefined };
  call.onAbort((reason) => {
    for (const part of parts) part.abort(reason);
  });
  return { parts, release: () => call.onAbort(undefined) };
}
