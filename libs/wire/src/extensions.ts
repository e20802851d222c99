/**
 * Extension identifiers the gateway reads or declares (wire notes §2.0: `extensions` in
 * ClientCapabilities and ServerCapabilities, keyed `<prefix>/<name>`; docs/operations.md §10
 * "Extensions").
 */
export const Extension = {
  /** MCP Apps: tools with interactive views in `ui://` resources (`_meta.ui` on tools). */
  ui: 'io.modelcontextprotocol/ui',
  /**
   * Tasks (SEP-2663): a `tools/call` may answer `resultType: "task"`, then `tasks/get`,
   * `tasks/update`, `tasks/cancel` (docs/operations.md §10 "Tasks").
   */
  tasks: 'io.modelcontextprotocol/tasks',
} as const;

/** The MIME type of an MCP App's HTML view, as a client declares it under the UI extension. */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether capabilities (a client's or a server's) declare the extension `id`: its settings, an
 * object (`{}` for none), under `extensions` — one rule for both eras.
 */
export function declaresExtension(capabilities: unknown, id: string): boolean {
  return (
    isRecord(capabilities) &&
    isRecord(capabilities.extensions) &&
    isRecord(capabilities.extensions[id])
  );
}

/**
 * Whether a Tool (as listed) is for an MCP App's view only: `_meta.ui.visibility` names who may
 * call it, and without `"model"` only the view (through a host that renders it) does.
 */
export function isAppOnlyTool(tool: unknown): boolean {
  if (!isRecord(tool) || !isRecord(tool._meta) || !isRecord(tool._meta.ui)) return false;
  const visibility = tool._meta.ui.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
}
