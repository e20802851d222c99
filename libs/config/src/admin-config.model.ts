import {
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
} from './class-validator';

/**
 * `mcp.admin`: the operators' registration API on the management port (docs/operations.md §15).
 * Who may call it is decided by `mcp.auth` (JWT with `scope`) or env `MCP_ADMIN_TOKEN`;
 * what may be registered by the URL patterns and address rules below.
 */
export class AdminConfig {
  /**
   * URL patterns an upstream registered at runtime must match
   * (docs/operations.md §15 "What may be registered"): each `scheme://host[:port][/path]`, host `*`
   * (any) or `*.example.com` (any subdomain), port `*` (any; absent: the scheme's default), path a
   * prefix at a segment boundary (absent: any path). Empty (the default): every http(s) URL
   * matches; the address rules still apply. Syntax: admin-url-patterns.ts.
   */
  @IsArray({ message: 'must be a list of URL patterns ("scheme://host[:port][/path]")' })
  @IsString({ each: true, message: 'each entry must be a string' })
  allowedUpstreamUrls: string[] = [];

  /**
   * Whether a registered upstream may resolve to a loopback address (127.0.0.0/8, ::1).
   * Absent: true under the `local` profile (the demo registers a server on 127.0.0.1),
   * false under every other.
   */
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  allowLoopback?: boolean;

  /**
   * CIDR ranges a registered upstream may resolve to although they are refused by default
   * (link-local 169.254.0.0/16 and fe80::/10, cloud metadata addresses, unspecified, loopback),
   * e.g. `10.0.0.0/8` is never refused, `169.254.10.0/24` must be listed here.
   */
  @IsArray({ message: 'must be a list of CIDR ranges ("a.b.c.d/n" or "v6::/n")' })
  @IsString({ each: true, message: 'each entry must be a string' })
  allowedAddressRanges: string[] = [];

  /**
   * The env variable names a registered upstream's `authorization.valueEnv` (or tokenExchange
   * `clientSecretEnv`) may name: exact names, or prefixes ending in `*`. Registrations name
   * secrets, never carry them; this bounds which of the gateway's variables an operator can
   * have it send to an upstream. The gateway's own secrets (`MCP_ADMIN_TOKEN`,
   * `MCP_SESSION_KEYS`, `REDIS_URL`) are refused whatever this says.
   */
  @IsArray({ message: 'must be a list of env variable names or prefixes ending in *' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, {
    each: true,
    message: 'each entry must be an env variable name, or a prefix ending in *',
  })
  allowedSecretEnv: string[] = ['MCP_UPSTREAM_SECRET_*'];

  /**
   * How many upstreams may be registered at runtime (configured ones do not count); a
   * registration beyond it is refused with 409. Bounds what an admin credential can make
   * every replica pull each round.
   */
  @IsInt({ message: 'must be a whole number' })
  @Min(0, { message: 'must be at least 0 (0: no registration is accepted)' })
  @Max(10_000, { message: 'must be at most 10000' })
  maxRegistrations = 100;

  /**
   * The scope a bearer token must carry for /admin when `mcp.auth.mode` is `jwt`
   * (docs/operations.md §15 "Access").
   */
  @IsString({ message: 'must be an OAuth scope ([!#-[\\]-~]+)' })
  @Matches(/^[\x21\x23-\x5b\x5d-\x7e]+$/, { message: 'must be an OAuth scope (RFC 6749 §3.3)' })
  scope = 'mcp:admin';
}
