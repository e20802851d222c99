// The MCP wire vocabulary, shared by the front door (libs/mcp) and the client toward upstreams
// (libs/upstream): pure values and functions, no Nest, no I/O (docs/architecture.md).
export {
  ACCEPTED_UPSTREAM_LEGACY_VERSIONS,
  DEFAULT_UNSTATED_VERSION,
  FIRST_MODERN_VERSION,
  isModernVersion,
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
} from './eras';
export {
  addRequired,
  capabilityNeededBy,
  missingClientCapabilities,
  undeclaredBy,
  type ClientCapabilities,
} from './client-capabilities';
export { declaresExtension, Extension, isAppOnlyTool, MCP_APP_MIME_TYPE } from './extensions';
export { decodeHeaderValue, encodeHeaderValue } from './header-values';
export { MetaKey, REQUEST_ENVELOPE_KEYS, withoutRequestEnvelope } from './meta-keys';
export { METHODS, methodRow, type McpNameField, type MethodRow } from './methods';
export { setOwnMember } from './own-member';
export { RawJson, stringifyMessage } from './raw-json';
export { JsonRpcCode } from './rpc-codes';
export {
  CLIENT_DROPPED_HEADERS,
  CREDENTIAL_HEADERS,
  gatewayVia,
  PERSONAL_CALLER_HEADERS,
  HOP_BY_HOP_HEADERS,
  MANAGEMENT_MAX_BODY_BYTES,
  MCP_MAX_BODY_BYTES,
  MCP_TRANSPORT_HEADERS,
  UNFORWARDABLE_HEADERS,
  viaNamesGateway,
} from './transport-headers';
export { GATEWAY_TOOL_PREFIX, MAX_TOOL_TAGS, TAG_PATTERN, toolTagsOf } from './tool-tags';
export { RESULT_TYPES, shownResultType, unknownResultType } from './result-types';
export { logRank, MCP_LOG_LEVELS, moreVerboseLevel, type McpLogLevel } from './log-levels';
