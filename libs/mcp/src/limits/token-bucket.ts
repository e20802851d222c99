/**
 * A bucket's settings (mcp.rateLimits.perSubject / perTool;
 * docs/operations.md §14 "Rate limits per caller").
 */
export interface BucketSettings {
  /** Most requests in a burst. */
  readonly capacity: number;
  /** Requests regained per second. */
  readonly refillPerSecond: number;
}

/** A bucket's state: tokens left (fractional) at `updatedAt` (ms, any monotonic clock). */
export interface BucketState {
  tokens: number;
  updatedAt: number;
}

/** The verdict on one request: admitted, or refused with the wait until a token is back. */
export type BucketVerdict =
  { readonly admitted: true } | { readonly admitted: false; readonly retryAfterMs: number };

/**
 * Takes one token from `state` at `now` (ms), refilling first; a new bucket starts full.
 * Pure but for mutating `state`; the Redis script (redis-buckets.ts) is the same rule in Lua.
 */
export function takeToken(
  state: BucketState | undefined,
  settings: BucketSettings,
  now: number,
): { state: BucketState; verdict: BucketVerdict } {
  const { capacity, refillPerSecond } = settings;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.updatedAt);
  const tokens =
    state === undefined
      ? capacity
      : Math.min(capacity, state.tokens + (elapsed / 1000) * refillPerSecond);
  if (tokens >= 1)
    return { state: { tokens: tokens - 1, updatedAt: now }, verdict: { admitted: true } };
  return {
    state: { tokens, updatedAt: now },
    verdict: { admitted: false, retryAfterMs: Math.ceil(((1 - tokens) / refillPerSecond) * 1000) },
  };
}

/** How long, in ms, an untouched bucket takes to be full again (after which it can be forgotten). */
export function refillMillis(settings: BucketSettings): number {
  return Math.ceil((settings.capacity / settings.refillPerSecond) * 1000);
}
