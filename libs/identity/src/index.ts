export {
  type CallerIdentity,
  callerExpired,
  callerExpiresAtMs,
  callerName,
  callerSubject,
} from './caller-identity';
export {
  callerAuthorization,
  gatewayAuthorization,
  SourceCredentialError,
  SourceCredentials,
  SourceCredentialsModule,
} from './source-credentials';
export { AUTH_RETRY_AFTER_SECONDS, type AuthOutcome } from './auth-outcome';
export { bearerToken, scopesOf } from './bearer-token';
export {
  AccessPolicy,
  FULL_ACCESS,
  allowsSource,
  allowsTool,
  type CallerAccess,
} from './access-policy';
export {
  PROTECTED_RESOURCE_PATH,
  protectedResourceMetadata,
  resourceMetadataUrl,
  wwwAuthenticate,
} from './protected-resource-metadata';
export { ResourceServer, callerOf } from './resource-server.service';
export { IdentityModule } from './identity.module';
