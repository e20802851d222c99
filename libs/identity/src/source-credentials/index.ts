export { SourceCredentials, SourceCredentialError } from './source-credentials.service';
export { SourceCredentialsModule } from './source-credentials.module';
export { callerAuthorization, gatewayAuthorization } from './source-authorization';
