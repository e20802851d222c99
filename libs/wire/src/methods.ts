/**
 * One table of the MCP methods the gateway knows (wire notes §1.2, §3, §4 in
 * ../shared/reference; docs/operations.md §11): which era's front door serves each, which
 * `params` field `Mcp-Name` mirrors, whether its 2026 result carries cache hints, whether it
 * opens a 2025 session, and whether it may answer `input_required`. Adding a method is a row
 * here and a handler in libs/mcp (docs/architecture.md "The house").
 */

/** Which `params` field the `Mcp-Name` header mirrors. */
export type McpNameField = 'name' | 'uri' | 'taskId';

export interface MethodRow {
  /** Served at the front door to 2025 clients (session era). */
  readonly legacy: boolean;
  /** Served at the front door to 2026-07-28 clients; anything else is 404 -32601 there. */
  readonly modern: boolean;
  /** The `params` field `Mcp-Name` mirrors (the v2 SDK's table), when the method has one. */
  readonly mcpName?: McpNameField;
  /**
   * Its 2026 result carries cache hints (`ttlMs`, `cacheScope`): the lists, and
   * `server/discover` (whose hints cover every source).
   */
  readonly cacheHints?: boolean;
  /**
   * Opens the 2025 session later requests are checked against (`initialize`): served before
   * the session id and the `MCP-Protocol-Version` header are checked, as there is none yet.
   */
  readonly opensSession?: boolean;
  /** May answer `input_required` (multi round-trip; wire notes §4). */
  readonly inputRequired?: boolean;
}

export const METHODS: Readonly<Record<string, MethodRow>> = {
  initialize: { legacy: true, modern: false, opensSession: true },
  ping: { legacy: true, modern: false },
  'server/discover': { legacy: false, modern: true, cacheHints: true },
  'subscriptions/listen': { legacy: false, modern: true },
  'tools/list': { legacy: true, modern: true, cacheHints: true },
  'tools/call': { legacy: true, modern: true, mcpName: 'name', inputRequired: true },
  'prompts/list': { legacy: true, modern: true, cacheHints: true },
  'prompts/get': { legacy: true, modern: true, mcpName: 'name', inputRequired: true },
  'resources/list': { legacy: true, modern: true, cacheHints: true },
  'resources/templates/list': { legacy: true, modern: true, cacheHints: true },
  'resources/read': { legacy: true, modern: true, mcpName: 'uri', inputRequired: true },
  'resources/subscribe': { legacy: true, modern: false },
  'resources/unsubscribe': { legacy: true, modern: false },
  'completion/complete': { legacy: true, modern: true },
  'logging/setLevel': { legacy: true, modern: false },
  // the Tasks extension (SEP-2663; docs/operations.md §10 "Tasks"): 2026 only, `tasks/list` and
  // `tasks/result` are gone from it (-32601)
  'tasks/get': { legacy: false, modern: true, mcpName: 'taskId' },
  'tasks/update': { legacy: false, modern: true, mcpName: 'taskId' },
  'tasks/cancel': { legacy: false, modern: true, mcpName: 'taskId' },
};

/** The row of `method`, or undefined for a method the gateway does not know. */
export function methodRow(method: string): MethodRow | undefined {
  return Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
}
