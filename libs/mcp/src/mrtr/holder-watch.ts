/**
 * Whether the replica that acknowledged a resume stopped before it replied
 * (docs/operations.md §11 "Multi round-trip and era bridging"): pub/sub keeps nothing, so a
 * holder that dies mid-round (a crash, a kill, a shutdown that closes Redis first) leaves its
 * sender waiting for a reply that never comes, for the call's whole time. Its channel tells:
 * Redis drops a subscriber whose connection closes, and a holder alive keeps one. A channel
 * without a subscriber for `graceMillis` in a row (longer than a live holder takes to subscribe
 * again after a reconnect) is a stopped holder.
 *
 * @param subscribers the holder channel's subscriber count now; undefined when Redis did not
 *   answer (then nothing is concluded: the replies-at-risk grace covers a Redis that is away)
 * @param waiting whether the resume is still waited on (the watch ends when it is not)
 * @returns true when the holder stopped, false when the resume stopped being waited on first
 */
export async function holderStopped(
  subscribers: () => Promise<number | undefined>,
  waiting: () => boolean,
  graceMillis: number,
  everyMillis: number,
): Promise<boolean> {
  let emptySince: number | undefined;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, everyMillis).unref());
    if (!waiting()) return false;
    const count = await subscribers();
    if (!waiting()) return false;
    if (count === undefined || count > 0) {
      emptySince = undefined;
      continue;
    }
    const now = performance.now();
    emptySince ??= now;
    if (now - emptySince >= graceMillis) return true;
  }
}
