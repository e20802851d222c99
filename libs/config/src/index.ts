export {
  type AdminSettings,
  type BundleDefinition,
  GATEWAY_CONFIG,
  type GatewayConfig,
  LOCAL_FIXTURE_BUNDLE_ID,
  LOG_LEVELS,
  type LogLevel,
  MCP_LISTENER_KINDS,
  type McpListenerKind,
  type ResolvedAuthorization,
  type SessionKey,
  type TokenExchangeAuthorization,
  type UpstreamDefinition,
  registeredAt,
  sameUpstream,
  upstreamSource,
} from './gateway-config';
export { ConfigValidationError } from './config-errors';
export type { ConfigProblem, ConfigProblemCode } from './config-problem';
export { gatewayConfigFrom, GatewayConfigModule } from './config.module';
export { loadGatewayConfig, resolveFilePath, type LoadConfigOptions } from './load-config';
export {
  McpConfig,
  BundleConfig,
  DiscoveryConfig,
  RegistryConfig,
  ExecutionConfig,
  SessionConfig,
  RedisConfig,
  ShutdownConfig,
  TracingConfig,
  HttpAccessConfig,
  ListenConfig,
  toolsCapPerUpstream,
  type AuthorizationMode,
  type ServerErrorBodyMode,
} from './mcp-config.model';
export { ConsoleConfig } from './console-config.model';
export { ManagementConfig } from './management-config.model';
export { compileManagementHosts, withoutTrailingDot } from './management-host-patterns';
export {
  UpstreamConfig,
  UpstreamTimeoutsConfig,
  UPSTREAM_PROTOCOLS,
  type UpstreamProtocolSetting,
} from './upstream-config.model';
export { upstreamNamePrefix } from './upstream-rules';
export { registrationAudienceKey } from './registration-credentials';
export {
  describeRedisServer,
  type RedisNode,
  type RedisSecrets,
  type RedisServer,
} from './redis-server';
export {
  compileAccessList,
  listAllows,
  parseHost,
  parseOrigin,
  type AccessList,
  type ParsedAddress,
} from './http-access-patterns';
export {
  AuditConfig,
  RateLimitsConfig,
  TokenBucketConfig,
  RATE_LIMIT_STORES,
  type RateLimitStore,
} from './caller-limits-config.model';
export {
  AuthConfig,
  AccessConfig,
  AccessRuleConfig,
  AccessMatchConfig,
  AUTH_MODES,
  AUTH_ALGORITHMS,
  type AuthMode,
} from './auth-config.model';
export { AdminConfig } from './admin-config.model';
export {
  parseUrlPattern,
  parseAddressRange,
  urlMatches,
  rangeList,
  type UrlPattern,
  type AddressRange,
} from './admin-url-patterns';
export {
  checkRegistration,
  type RegisteredUpstreamConfig,
  type RegistrationCheck,
} from './registration-rules';
export { checkVirtualServer, type VirtualServerCheck } from './virtual-server-registration';
export {
  AddressRules,
  NO_ADDRESS_ALLOWANCES,
  embeddedIPv4,
  type AddressRefusal,
  type AddressRuleSettings,
} from './address-rules';
export {
  ToolSearchConfig,
  TOOL_PATTERN,
  ToolTagsConfig,
  VIRTUAL_SERVER_ID_PATTERN,
  VirtualServerConfig,
} from './virtual-servers-config.model';
