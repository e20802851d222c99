import { IsIn, IsOptional, IsString, Matches } from 'class-validator';

export const AUTHORIZATION_MODES = ['none', 'passthrough', 'static'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/**
 * How the `Authorization` header reaches a bundle's Tool Service (contract §10: "설정에 따라
 * 전달") or an upstream MCP server (issue 10 §1). `passthrough` forwards the caller's own token,
 * which the MCP authorization spec forbids unless the operator chooses it knowingly.
 */
export class BundleAuthorizationConfig {
  /** none: never sent; passthrough: the caller's header as is; static: the value of env `valueEnv`. */
  @IsIn(AUTHORIZATION_MODES, { message: `must be one of ${AUTHORIZATION_MODES.join(', ')}` })
  mode: AuthorizationMode = 'none';

  /** With mode static: the environment variable holding the whole header value (e.g. "Bearer …"). */
  @IsOptional()
  @IsString({ message: 'must be the name of an environment variable' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'must be the name of an environment variable' })
  valueEnv?: string;
}
