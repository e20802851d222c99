import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from './class-validator';

export const AUTH_MODES = ['none', 'jwt'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** JWS algorithms a token may be signed with (asymmetric only: the gateway holds no shared secret). */
export const AUTH_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `mcp.auth`: the gateway as an OAuth 2.1 resource server for `/mcp` (docs/operations.md §13; MCP
 * authorization spec, wire notes §7). `none` (the local profile's default) serves every
 * request unauthenticated; `jwt` verifies every request's Bearer token.
 */
export class AuthConfig {
  @IsIn(AUTH_MODES, { message: `must be one of ${AUTH_MODES.join(', ')}` })
  mode: AuthMode = 'none';

  /** The authorization server's issuer identifier: the tokens' `iss` (exact match). */
  @IsOptional()
  @IsString({ message: 'must be the issuer URL (the tokens\u2019 "iss")' })
  issuer?: string;

  /** The gateway's canonical resource URI (RFC 8707), e.g. https://gw.example.com/mcp: the tokens' `aud`. */
  @IsOptional()
  @IsString({ message: 'must be the canonical resource URI of this gateway (https://host/mcp)' })
  audience?: string;

  /** Where the issuer publishes its signing keys (JWKS). */
  @IsOptional()
  @IsString({ message: 'must be an http(s) URL' })
  jwksUrl?: string;

  /** Scopes every token must carry; a valid token without one of them gets 403 insufficient_scope. */
  @IsArray({ message: 'must be a list of scope names' })
  @IsString({ each: true, message: 'each entry must be a scope name' })
  requiredScopes: string[] = [];

  /** JWS algorithms accepted (`none` and HMAC never). */
  @IsArray({ message: `must be a list of algorithms (${AUTH_ALGORITHMS.join(', ')})` })
  @IsIn(AUTH_ALGORITHMS, {
    each: true,
    message: `each entry must be one of ${AUTH_ALGORITHMS.join(', ')}`,
  })
  algorithms: string[] = ['RS256', 'ES256', 'PS256', 'EdDSA'];

  /**
   * The JWT `typ` header values accepted (RFC 9068 §4 asks for `at+jwt`; Entra ID and Keycloak
   * send `JWT`), compared case-insensitively with an `application/` prefix ignored. A token
   * without `typ` is refused unless the list holds `none` (docs/security.md, the IdP table).
   */
  @IsArray({ message: 'must be a list of JWT "typ" values (e.g. at+jwt, JWT; none: no typ)' })
  @ArrayNotEmpty({ message: 'must name at least one JWT "typ" value (e.g. at+jwt, JWT)' })
  @IsString({ each: true, message: 'each entry must be a JWT "typ" value, or none' })
  @Matches(/^[!-~]+$/, { each: true, message: 'each entry must be a JWT "typ" value, or none' })
  tokenTypes: string[] = ['at+jwt', 'JWT'];

  /** Tolerance for `exp`, `nbf` and `iat`, in seconds. */
  @IsInt({ message: 'must be an integer between 0 and 300 (seconds)' })
  @Min(0, { message: 'must be an integer between 0 and 300 (seconds)' })
  @Max(300, { message: 'must be an integer between 0 and 300 (seconds)' })
  clockSkewSeconds = 30;

  /** RFC 7662 endpoint for opaque (non-JWT) tokens; absent: only JWTs are accepted. */
  @IsOptional()
  @IsString({ message: 'must be an http(s) URL' })
  introspectionUrl?: string;

  /** The client id the gateway introspects with (HTTP Basic, RFC 7662 §2.1). */
  @IsOptional()
  @IsString({ message: 'must be the client id the gateway introspects with' })
  introspectionClientId?: string;

  /** The environment variable holding that client's secret. */
  @IsOptional()
  @IsString({ message: 'must be the name of an environment variable' })
  @Matches(ENV_NAME, { message: 'must be the name of an environment variable' })
  introspectionClientSecretEnv?: string;

  /**
   * How long an active introspection answer may be reused, in seconds (never past the token's
   * `exp`). 0 (the default): every request is introspected, so a revoked token is refused on
   * its very next call.
   */
  @IsInt({ message: 'must be an integer between 0 and 3600 (seconds)' })
  @Min(0, { message: 'must be an integer between 0 and 3600 (seconds)' })
  @Max(3600, { message: 'must be an integer between 0 and 3600 (seconds)' })
  introspectionCacheSeconds = 0;

  /**
   * How long an inactive introspection answer (or a refused one: expired, another audience…)
   * is reused, in seconds, so a junk token repeated costs the authorization server one call.
   */
  @IsInt({ message: 'must be an integer between 0 and 300 (seconds)' })
  @Min(0, { message: 'must be an integer between 0 and 300 (seconds)' })
  @Max(300, { message: 'must be an integer between 0 and 300 (seconds)' })
  introspectionInactiveCacheSeconds = 10;

  /**
   * Most introspection requests in flight at once (identical tokens share one); more wait
   * for a slot, at most `authorizationServerTimeoutMillis`, and are then answered 503.
   */
  @IsInt({ message: 'must be an integer between 1 and 1000' })
  @Min(1, { message: 'must be an integer between 1 and 1000' })
  @Max(1000, { message: 'must be an integer between 1 and 1000' })
  introspectionMaxConcurrent = 16;

  /**
   * Bound of one call to the authorization server (a JWKS fetch, an introspection request,
   * or the wait for an introspection slot), ms; past it the request is answered 503.
   */
  @IsInt({ message: 'must be an integer between 100 and 60000 (milliseconds)' })
  @Min(100, { message: 'must be an integer between 100 and 60000 (milliseconds)' })
  @Max(60_000, { message: 'must be an integer between 100 and 60000 (milliseconds)' })
  authorizationServerTimeoutMillis = 5_000;

  /** `authorization_servers` of the protected-resource metadata (RFC 9728); default `[issuer]`. */
  @IsOptional()
  @IsArray({ message: 'must be a list of issuer URLs' })
  @IsString({ each: true, message: 'each entry must be an issuer URL' })
  authorizationServers?: string[];

  /** `scopes_supported` of the protected-resource metadata; default `requiredScopes`. */
  @IsOptional()
  @IsArray({ message: 'must be a list of scope names' })
  @IsString({ each: true, message: 'each entry must be a scope name' })
  scopesSupported?: string[];
}

/** Who a rule applies to: exactly one of `claim`+`value`, `subject`, `scope`. */
export class AccessMatchConfig {
  /** A claim name (e.g. `groups`): a string claim equal to `value`, or an array claim containing it. */
  @IsOptional()
  @IsString({ message: 'must be a claim name' })
  claim?: string;

  @IsOptional()
  @IsString({ message: 'must be a string (the claim value to match)' })
  value?: string;

  /** The token's `sub`. */
  @IsOptional()
  @IsString({ message: 'must be a subject (the tokens\u2019 "sub")' })
  subject?: string;

  /** A scope the token carries. */
  @IsOptional()
  @IsString({ message: 'must be a scope name' })
  scope?: string;
}

/**
 * One grant (docs/operations.md §13 "Access"): callers matching `match` may use these sources and
 * tools.
 */
export class AccessRuleConfig {
  @IsObject({ message: 'must be a mapping: {claim, value} | {subject} | {scope}' })
  @ValidateNested()
  @Type(() => AccessMatchConfig)
  match!: AccessMatchConfig;

  /** Bundle or upstream ids: every tool, prompt and resource of those sources. */
  @IsArray({ message: 'must be a list of bundle or upstream ids' })
  @IsString({ each: true, message: 'each entry must be a source id' })
  sources: string[] = [];

  /** Single tools by published name. */
  @IsArray({ message: 'must be a list of published tool names' })
  @IsString({ each: true, message: 'each entry must be a tool name' })
  tools: string[] = [];
}

/** `mcp.access`: per-request grants; a caller gets the union of the rules that match it. */
export class AccessConfig {
  @IsArray({ message: 'must be a list of rules ({match, sources, tools})' })
  @IsObject({ each: true, message: 'each rule must be a mapping (match, sources, tools)' })
  @ValidateNested({ each: true })
  @Type(() => AccessRuleConfig)
  rules: AccessRuleConfig[] = [];
}
