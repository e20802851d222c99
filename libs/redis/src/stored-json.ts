/** Room for the record around a stored payload (ids, times, who wrote it), in characters. */
export const STORED_RECORD_ROOM = 65_536;

/**
 * The longest JSON text read back from Redis (a key's value, a hash field, a pub/sub message)
 * that is parsed, when what it carries was bounded by `payloadLimit` (bytes or characters) where
 * it was made: JSON can make a character of a string six (`\u0001`) and a number spelled out
 * (`1e20`: 21 digits) about five times longer, so eight times that, and room for the record.
 * Anything longer is no value this gateway wrote (a hostile or corrupt one): it is treated as
 * absent, never parsed, since JSON.parse of it alone would hold the event loop
 * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster").
 */
export function storedJsonLimit(payloadLimit: number): number {
  return 8 * payloadLimit + STORED_RECORD_ROOM;
}
