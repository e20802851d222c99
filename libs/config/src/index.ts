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
  type AuthorizationMode,
  type ServerErrorBodyMode,
} from './mcp-config.model';
