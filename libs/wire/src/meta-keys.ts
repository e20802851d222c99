/**
 * The `_meta` keys of the 2026-07-28 request envelope and of results (wire notes §2.0 in
 * ../shared/reference; docs/operations.md §11). One spelling for the server side (the front
 * door reads them from agents) and the client side (the gateway writes them to upstreams).
 */
export const MetaKey = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;
