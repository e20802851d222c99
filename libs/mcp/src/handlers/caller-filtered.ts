/** Results a handler built for its caller alone (issue 11 §3, issue 12 access rules). */
const filtered = new WeakSet<object>();

/**
 * Marks a list result (or `server/discover`'s capabilities) as filtered for the request's
 * caller — `MethodContext.caller` set and access rules left something out — so its 2026 cache
 * hints say `cacheScope: "private"` (wire notes §3: output that depends on the caller's
 * credentials must not be shared). Returns the same object. The hook for issue 12's filtering.
 */
export function markFilteredForCaller<T extends object>(result: T): T {
  filtered.add(result);
  return result;
}

/** Whether a handler marked this result with `markFilteredForCaller`. */
export function isFilteredForCaller(result: object): boolean {
  return filtered.has(result);
}
