/**
 * The `resultType` values this gateway knows (MCP 2026-07-28 "ResultType": `complete`,
 * `input_required` of multi round-trip requests; `task` of the tasks extension, SEP-2663). A
 * client "MUST treat any value it doesn't recognise as invalid", and toward an upstream the
 * gateway is that client: an answer with another value is refused, never passed on as a result.
 */
export const RESULT_TYPES: ReadonlySet<string> = new Set(['complete', 'input_required', 'task']);

/**
 * The `resultType` a result carries that the gateway does not know, as text for an error
 * message (cut to 40 characters); undefined when it carries none or a known one.
 */
export function unknownResultType(result: Readonly<Record<string, unknown>>): string | undefined {
  if (!('resultType' in result)) return undefined;
  const value = result.resultType;
  if (typeof value === 'string' && RESULT_TYPES.has(value)) return undefined;
  return shownResultType(value);
}

/** A `resultType` value as an error message names it: its JSON, cut to 40 characters. */
export function shownResultType(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 40);
}
