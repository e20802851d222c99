export { SourceCredentials, SourceCredentialError } from './source-credentials.service';
export { SourceCredentialsModule } from './source-credentials.module';
