/**
 * Where this gateway's /mcp listener is bound, filled in by main.ts once PORT is bound (PORT=0
 * picks a free one): the console derives its "Run" URL from it when `mcp.console.mcpUrl` is
 * not set.
 */
export class McpAddress {
  /** The bound TCP port of /mcp; undefined until the listener is up. */
  port?: number;
}
