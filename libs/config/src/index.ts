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
  type AuthorizationMode,
  type ServerErrorBodyMode,
} from './mcp-config.model';
export {
  compileAccessList,
  listAllows,
  parseHost,
  parseOrigin,
  type AccessList,
  type ParsedAddress,
} from './http-access-patterns';
