import { encodeHeaderValue, methodRow } from '@app/wire';

/**
 * The `Mcp-Name` value for a request (wire notes §1.2, SEP-2243), encoded: the `params` field
 * the method table names (`name` of tools/call and prompts/get, `uri` of resources/read,
 * `taskId` of tasks/get|update|cancel); undefined for other methods, or when that field is not
 * a string.
 */
export function mcpNameHeader(
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const field = methodRow(method)?.mcpName;
  if (field === undefined) return undefined;
  const value = params?.[field];
  return typeof value === 'string' ? encodeHeaderValue(value) : undefined;
}
