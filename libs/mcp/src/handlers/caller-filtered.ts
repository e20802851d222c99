/** Results a handler built for its caller alone: private in the cache hints (docs/operations.md §11 "Cache hints") because the access rules
 * filtered it (docs/operations.md §13 "Access"). */
const filtered = new WeakSet<object>();

/**
 * Marks a list result (or `server/discover`'s capabilities) as filtered for the request's
 * caller — `MethodContext.caller` set and access rules left something out — so its 2026 cache
 * hints say `cacheScope: "private"` (wire notes §3: output that depends on the caller's
 * credentials must not be shared). Returns the same object. The hook the access rules' filtering
 * uses.
 */
export function markFilteredForCaller<T extends object>(result: T): T {
  filtered.add(result);
  return result;
}

/** Whether a handler marked this result with `markFilteredForCaller`. */
export function isFilteredForCaller(result: object): boolean {
  return filtered.has(result);
}
