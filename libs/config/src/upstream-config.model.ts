import { Type } from 'class-transformer';
import { FIRST_MODERN_VERSION, LATEST_LEGACY_VERSION } from '@app/wire';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from './class-validator';
import { BundleAuthorizationConfig } from './authorization-config.model';

/**
 * Identifier of an upstream: the same alphabet as a bundle id, unique across both
 * (docs/operations.md §10 "Configuration").
 */
export const UPSTREAM_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/**
 * An upstream namePrefix: the tool-name alphabet clients accept everywhere, or ""
 * (docs/operations.md §10 "Configuration").
 */
export const UPSTREAM_PREFIX_PATTERN = /^[A-Za-z0-9_-]{0,48}$/;

export const UPSTREAM_PROTOCOLS = ['auto', LATEST_LEGACY_VERSION, FIRST_MODERN_VERSION] as const;
export type UpstreamProtocolSetting = (typeof UPSTREAM_PROTOCOLS)[number];

/**
 * Where an upstream's lists come from (docs/operations.md §11 "Live lists"): `snapshot` (default)
 * pulled on the refresh schedule into the catalog; `live` fetched per request, for the caller.
 */
export const UPSTREAM_LIST_MODES = ['snapshot', 'live'] as const;
export type UpstreamListMode = (typeof UPSTREAM_LIST_MODES)[number];

/** Per-upstream deadlines, in ms. */
export class UpstreamTimeoutsConfig {
  /** TCP connect timeout, ms (default 1000, like manifest pulls). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(600_000, { message: 'must be at most 600000 (10 minutes, in ms)' })
  connectMillis = 1000;

  /** Deadline of one list pull (every page of tools/list, resources/list, …), ms (default 5000). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(600_000, { message: 'must be at most 600000 (10 minutes, in ms)' })
  listMillis = 5000;

  /** Deadline of one call (tools/call, prompts/get, resources/read, …), ms; absent: discovery.maxToolTimeoutMillis. */
  @IsOptional()
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(2_147_483_647, { message: 'must be at most 2147483647 (the longest Node timer, in ms)' })
  callMillis?: number;
}

/** The longest upstream URL: what browsers and most servers take in a request line. */
export const MAX_UPSTREAM_URL_LENGTH = 2048;

/**
 * One upstream MCP server under `mcp.upstreams[]` (docs/operations.md §10 "Configuration"): its
 * tools, resources and prompts join the catalog beside the bundles'. `namePrefix` defaults to
 * `<id>__`.
 */
export class UpstreamConfig {
  @IsString({ message: 'is required: an upstream id ([A-Za-z0-9._-]{1,64})' })
  @Matches(UPSTREAM_ID_PATTERN, { message: 'must match [A-Za-z0-9._-]{1,64}' })
  id!: string;

  /**
   * The upstream's MCP endpoint (Streamable HTTP), http or https; bounded, as every registered
   * record is kept in memory and Redis and shown by /admin and in audit lines.
   */
  @IsString({ message: 'is required: the http(s) URL of the MCP endpoint' })
  @MaxLength(MAX_UPSTREAM_URL_LENGTH, {
    message: `must be at most ${MAX_UPSTREAM_URL_LENGTH} characters`,
  })
  url!: string;

  /** Prepended to every tool and prompt name; absent: `<id>__`; "" only for a sole source. */
  @IsOptional()
  @IsString({ message: 'must be a string of [A-Za-z0-9_-] (at most 48 characters) or ""' })
  @Matches(UPSTREAM_PREFIX_PATTERN, {
    message: 'must use only [A-Za-z0-9_-] and be at most 48 characters',
  })
  namePrefix?: string;

  /** false: never contacted, never served; status "disabled". */
  @IsBoolean({ message: 'must be true or false' })
  enabled = true;

  /**
   * true: a call's arguments are checked against the tool's listed inputSchema before it is
   * sent, as a bundle's are; false (default): the upstream validates its own, as MCP servers
   * do (docs/operations.md §6 "Argument validation").
   */
  @IsBoolean({ message: 'must be true or false' })
  validateArguments = false;

  /**
   * true: each tool is published only as an operator approved it; a new tool, or a change
   * beyond the cosmetic rule, is held for review (docs/operations.md §6 "Pinned tool
   * definitions").
   */
  @IsBoolean({ message: 'must be true or false' })
  pinned = false;

  /** `auto` probes server/discover and falls back to initialize; a pinned revision skips the probe. */
  @IsIn(UPSTREAM_PROTOCOLS, { message: `must be one of ${UPSTREAM_PROTOCOLS.join(', ')}` })
  protocol: UpstreamProtocolSetting = 'auto';

  /**
   * `live`: tools/list, prompts/list, resources/list and resources/templates/list are fetched
   * from this upstream per request (with the caller's forwarded headers, bounded by
   * `timeouts.listMillis`) and merged with the catalog; `snapshot` (default): from the catalog.
   */
  @IsIn(UPSTREAM_LIST_MODES, { message: `must be one of ${UPSTREAM_LIST_MODES.join(', ')}` })
  lists: UpstreamListMode = 'snapshot';

  @IsObject({ message: 'must be a mapping of keys (not a list or a value)' })
  @ValidateNested()
  @Type(() => UpstreamTimeoutsConfig)
  timeouts: UpstreamTimeoutsConfig = new UpstreamTimeoutsConfig();

  /**
   * The ttlMs (ms) its lists contribute to the gateway's cache hints when the upstream sends
   * none (a 2025 upstream never does); absent: 0 (docs/operations.md §11 "Cache hints"; wire notes
   * §3).
   */
  @IsOptional()
  @IsInt({ message: 'must be an integer >= 0 (ms)' })
  @Min(0, { message: 'must be an integer >= 0 (ms)' })
  @Max(86_400_000, { message: 'must be at most 86400000 (one day, in ms)' })
  cacheTtlMillis?: number;

  /** The cacheScope its lists contribute when the upstream sends none; absent: private. */
  @IsOptional()
  @IsIn(['public', 'private'], { message: 'must be public or private' })
  cacheScope?: 'public' | 'private';

  /** Caller header names copied to this upstream on calls (e.g. X-Mcp-Token); never hop-by-hop ones. */
  @IsArray({ message: 'must be a list of header names' })
  @IsString({ each: true, message: 'each entry must be a header name' })
  @Matches(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
    each: true,
    message: 'each entry must be an HTTP header name (RFC 9110 token)',
  })
  forwardHeaders: string[] = [];

  /** How `Authorization` reaches the upstream: none (default), static (valueEnv), passthrough. */
  @IsObject({ message: 'must be a mapping of keys (not a list or a value)' })
  @ValidateNested()
  @Type(() => BundleAuthorizationConfig)
  authorization: BundleAuthorizationConfig = new BundleAuthorizationConfig();
}
