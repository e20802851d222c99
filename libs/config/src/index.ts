export * from './gateway-config';
export * from './config-errors';
export * from './config.module';
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
  HttpAccessConfig,
  ListenConfig,
  type AuthorizationMode,
  type ServerErrorBodyMode,
} from './mcp-config.model';
export {
  UpstreamConfig,
  UpstreamTimeoutsConfig,
  UPSTREAM_PROTOCOLS,
  type UpstreamProtocolSetting,
} from './upstream-config.model';
export { UNFORWARDABLE_HEADERS, upstreamNamePrefix } from './upstream-rules';
export {
  compileAccessList,
  listAllows,
  parseHost,
  parseOrigin,
  type AccessList,
  type ParsedAddress,
} from './http-access-patterns';
