export { McpModule } from './mcp.module';
export { McpHttpServer } from './http/mcp-http-server';
export { GatewayTasks } from './tasks/gateway-tasks';
export { MCP_MAX_BODY_BYTES } from './http/listener-limits';
export { McpController } from './http/mcp.controller';
export { configureMcpFastify, mcpFastifyAdapter } from './http/mcp-fastify';
export { closeIdleAndUnused, trackConnections } from './http/drain-listener';
export { McpTransport } from './http/mcp-transport.service';
export {
  SessionTokenService,
  type SessionClaims,
  type SessionsView,
} from './session/session-token.service';
export { HttpAccessPolicy, type AccessDecision } from './http/http-access.policy';
export { GatewayError, GatewayErrorCode } from './errors/gateway-error';
export { legacyWireError, type WireError } from './errors/wire-errors';
export { parseMessage, classifyMessage } from './jsonrpc/parse-message';
export { extractRawMember } from './jsonrpc/raw-member';
export type { InboundMessage, JsonRpcId } from './jsonrpc/jsonrpc.types';
export { negotiateFormat } from './answers/http-answer';
export { markFilteredForCaller, isFilteredForCaller } from './handlers/caller-filtered';
export {
  VirtualServers,
  type ServedIdentity,
  type VirtualServerStatus,
} from './servers/virtual-servers.service';
export {
  VirtualServerRegistrations,
  type RegisteredServerView,
  type ServerAdminOutcome,
  type ServerIfMatch,
} from './servers/server-registrations.service';
