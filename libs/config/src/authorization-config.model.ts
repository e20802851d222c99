import { IsIn, IsOptional, IsString, Matches, MinLength } from './class-validator';

export const AUTHORIZATION_MODES = ['none', 'passthrough', 'static', 'tokenExchange'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * How the `Authorization` header reaches a bundle's Tool Service (contract §10: "설정에 따라
 * 전달") or an upstream MCP server (docs/operations.md §14 "Credentials towards sources").
 * `passthrough` forwards the caller's own token, which the MCP authorization spec forbids unless
 * the operator chooses it knowingly; `tokenExchange` (RFC 8693) sends a token issued for the source
 * instead.
 */
export class BundleAuthorizationConfig {
  /**
   * none: never sent; passthrough: the caller's header as is; static: the value of env
   * `valueEnv`; tokenExchange: the caller's token exchanged at `tokenEndpoint` for one whose
   * audience is `audience` (docs/operations.md §14 "Credentials towards sources").
   */
  @IsIn(AUTHORIZATION_MODES, { message: `must be one of ${AUTHORIZATION_MODES.join(', ')}` })
  mode: AuthorizationMode = 'none';

  /** With mode static: the environment variable holding the whole header value (e.g. "Bearer …"). */
  @IsOptional()
  @IsString({ message: 'must be the name of an environment variable' })
  @Matches(ENV_NAME, { message: 'must be the name of an environment variable' })
  valueEnv?: string;

  /** With mode tokenExchange: the authorization server's token endpoint (http or https URL). */
  @IsOptional()
  @IsString({ message: 'must be the http(s) URL of the token endpoint' })
  tokenEndpoint?: string;

  /** With mode tokenExchange: the gateway's client id at the authorization server. */
  @IsOptional()
  @IsString({ message: 'must be the client id of the gateway at the authorization server' })
  @MinLength(1, { message: 'must be the client id of the gateway at the authorization server' })
  clientId?: string;

  /** With mode tokenExchange: the environment variable holding the client secret. */
  @IsOptional()
  @IsString({ message: 'must be the name of an environment variable' })
  @Matches(ENV_NAME, { message: 'must be the name of an environment variable' })
  clientSecretEnv?: string;

  /**
   * With mode tokenExchange: the source's audience (its canonical resource URI, RFC 8707),
   * sent as both `resource` and `audience` of the exchange request.
   */
  @IsOptional()
  @IsString({ message: 'must be the audience (resource URI) of the source' })
  @MinLength(1, { message: 'must be the audience (resource URI) of the source' })
  audience?: string;

  /** With mode tokenExchange: space-separated scopes to ask for (optional). */
  @IsOptional()
  @IsString({ message: 'must be a space-separated list of scopes' })
  scope?: string;
}
