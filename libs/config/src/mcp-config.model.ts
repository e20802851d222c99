import { Type } from 'class-transformer';
import { AccessConfig, AuthConfig } from './auth-config.model';
import { AdminConfig } from './admin-config.model';
import { BundleAuthorizationConfig } from './authorization-config.model';
import { ConsoleConfig } from './console-config.model';
import { ManagementConfig } from './management-config.model';
import { UpstreamConfig } from './upstream-config.model';
import {
  ToolSearchConfig,
  ToolTagsConfig,
  VirtualServerConfig,
} from './virtual-servers-config.model';
import { AuditConfig, RateLimitsConfig } from './caller-limits-config.model';
import { REDIS_NODE_PATTERN } from './redis-server';

export {
  AUTHORIZATION_MODES,
  BundleAuthorizationConfig,
  type AuthorizationMode,
} from './authorization-config.model';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateNested,
  IsArray,
  IsDefined,
  IsObject,
  ArrayNotEmpty,
  IsNumber,
} from './class-validator';

/** A YAML list or scalar where a section (mapping) belongs would leave every key of it undefined. */
const MAPPING = 'must be a mapping of keys (not a list or a value)';

/** Node timers hold at most 2^31-1 ms (about 24.8 days); a larger value would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The `mcp:` YAML tree of the bundle contract (§3), plus the few keys this gateway adds
 * (`registry.refreshJitterSeconds`, per-bundle `authorization`, `localFixture`,
 * `execution`, `session`, `http`). Defaults are the contract's recommended values (§6).
 * Instances are only ever built by `loadGatewayConfig`, which validates them.
 */

/** Identifier of a bundle or of the gateway itself: used in logs, status and Redis keys. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** A namePrefix uses the tool-name alphabet of contract §5 and leaves room for a name. */
export const NAME_PREFIX_PATTERN = /^[A-Za-z0-9_./-]{1,63}$/;

export class RegistryConfig {
  /** Seconds between scheduled manifest pulls (contract §6: 30). */
  @IsInt({ message: 'must be a positive integer (seconds)' })
  @Min(1, { message: 'must be a positive integer (seconds)' })
  @Max(86_400, { message: 'must be at most 86400 (one day, in seconds)' })
  refreshIntervalSeconds = 30;

  /** Upper bound in seconds of the random delay added to the first scheduled pull only (contract §3: 0..5). */
  @IsInt({ message: 'must be an integer >= 0 (seconds)' })
  @Min(0, { message: 'must be an integer >= 0 (seconds)' })
  @Max(3600, { message: 'must be at most 3600 (one hour, in seconds)' })
  refreshJitterSeconds = 5;

  /**
   * A tools/call naming an unknown tool is answered after a refresh round that started after
   * it (contract §8). That round starts no sooner than this many ms after the previous round
   * started: a flood of unknown names shares rounds and costs at most one pull per bundle per
   * interval, and each miss still gets its refresh (delayed, never dropped). 0 = no delay.
   */
  @IsInt({ message: 'must be an integer >= 0 (ms)' })
  @Min(0, { message: 'must be an integer >= 0 (ms)' })
  @Max(60_000, { message: 'must be at most 60000 (ms)' })
  notFoundRefreshMinIntervalMillis = 1000;

  /**
   * The flood limit of an upstream's list_changed notifications (docs/operations.md §10):
   * the first notification of a burst pulls that upstream at once; later ones are coalesced
   * into one more pull of it, started no sooner than this many ms after the previous pull of
   * it started (delayed, never dropped: the state after the burst is always pulled). 0 = no
   * delay (one pull at a time per upstream still).
   */
  @IsInt({ message: 'must be an integer >= 0 (ms)' })
  @Min(0, { message: 'must be an integer >= 0 (ms)' })
  @Max(60_000, { message: 'must be at most 60000 (ms)' })
  listChangedRefreshMinIntervalMillis = 1000;

  /**
   * Most pages one upstream list (tools/list, resources/list, …) may take, following
   * `nextCursor`; more, or a cursor seen twice, is a failed pull (docs/operations.md §10 "Lists").
   */
  @IsInt({ message: 'must be a positive integer (pages)' })
  @Min(1, { message: 'must be a positive integer (pages)' })
  @Max(10_000, { message: 'must be at most 10000 (pages)' })
  maxPagesPerList = 100;
}

export class DiscoveryConfig {
  /** true: bundle manifests are the tool source; false: the legacy local JSON fixture (local profile only). */
  @IsBoolean({ message: 'must be true or false' })
  enabled = true;

  /** TCP connect timeout in ms for manifest pulls and tool calls (contract §6: 1000). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(600_000, { message: 'must be at most 600000 (10 minutes, in ms)' })
  connectTimeoutMillis = 1000;

  /** Read timeout in ms for a manifest pull: headers and body each (contract §6: 3000). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(600_000, { message: 'must be at most 600000 (10 minutes, in ms)' })
  readTimeoutMillis = 3000;

  /** A manifest with more tools than this rejects that bundle (contract §7.3). */
  @IsInt({ message: 'must be a positive integer' })
  @Min(1, { message: 'must be a positive integer' })
  maxToolsPerBundle = 100;

  /**
   * An upstream whose tools/list lists more tools than this is a failed pull (it keeps its last
   * good lists), found by counting before the answer is parsed and before any inputSchema is
   * compiled. Absent: maxToolsPerBundle (see `toolsCapPerUpstream`).
   */
  @IsOptional()
  @IsInt({ message: 'must be a positive integer (tools)' })
  @Min(1, { message: 'must be a positive integer (tools)' })
  maxToolsPerUpstream?: number;

  /**
   * The most entries one upstream's resources/list, resources/templates/list or prompts/list
   * may list (every page together): counted as the answer arrives, before it is parsed, as
   * tools are (docs/operations.md §1, §10).
   */
  @IsInt({ message: 'must be a positive integer (list entries)' })
  @Min(1, { message: 'must be a positive integer (list entries)' })
  @Max(1_000_000, { message: 'must be at most 1000000 (list entries)' })
  maxListItemsPerUpstream = 10_000;

  /** More tools than this across all bundles rejects the aggregate (contract §7.3). */
  @IsInt({ message: 'must be a positive integer' })
  @Min(1, { message: 'must be a positive integer' })
  maxToolsTotal = 200;

  /** A manifest body larger than this many bytes is a failed pull. */
  @IsInt({ message: 'must be a positive integer (bytes)' })
  @Min(1, { message: 'must be a positive integer (bytes)' })
  maxManifestBytes = 1_048_576;

  /** Cap in ms for a tool's `_meta.timeoutMillis`, and the timeout of tools that set none (contract §7.5). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(MAX_TIMER_MS, { message: 'must be at most 2147483647 (the longest Node timer, in ms)' })
  maxToolTimeoutMillis = 30_000;
}

/**
 * The most tools one upstream's tools/list may list: maxToolsPerUpstream (default
 * maxToolsPerBundle), and never more than maxToolsTotal, which such a list could not fit.
 */
export function toolsCapPerUpstream(discovery: DiscoveryConfig): {
  readonly limit: number;
  readonly key: 'maxToolsPerUpstream' | 'maxToolsTotal';
} {
  const perUpstream = discovery.maxToolsPerUpstream ?? discovery.maxToolsPerBundle;
  return perUpstream <= discovery.maxToolsTotal
    ? { limit: perUpstream, key: 'maxToolsPerUpstream' }
    : { limit: discovery.maxToolsTotal, key: 'maxToolsTotal' };
}

export const SERVER_ERROR_BODY_MODES = ['hide', 'show'] as const;
export type ServerErrorBodyMode = (typeof SERVER_ERROR_BODY_MODES)[number];

export class BundleConfig {
  @IsString({ message: 'is required: a bundle id ([A-Za-z0-9._-]{1,64})' })
  @Matches(IDENTIFIER_PATTERN, { message: 'must match [A-Za-z0-9._-]{1,64}' })
  id!: string;

  /** GET target of the manifest pull (contract §4). */
  @IsString({ message: 'is required: an http(s) URL' })
  manifestUrl!: string;

  /** Tool calls go to POST {baseEndpoint}/{toolName} (contract §10). Routing comes only from here. */
  @IsString({ message: 'is required: an http(s) URL' })
  baseEndpoint!: string;

  /** Every tool name of this bundle must start with it (contract §5, §7.1). */
  @IsString({ message: 'is required, e.g. "processing."' })
  @Matches(NAME_PREFIX_PATTERN, { message: 'must match [A-Za-z0-9_./-]{1,63}' })
  namePrefix!: string;

  /** Local profile only: manifest file read when the first remote pull fails (contract §3). */
  @IsOptional()
  @IsString({ message: 'must be a file path (file:./path or ./path)' })
  @MinLength(1, { message: 'must be a file path (file:./path or ./path)' })
  fallbackManifestFile?: string;

  /** false: never pulled, never served; status "disabled" (contract §3). */
  @IsBoolean({ message: 'must be true or false' })
  enabled = true;

  /**
   * true (default): a call's arguments are checked against the tool's inputSchema before it is
   * sent, and refused with an isError result naming each violated path (docs/operations.md §6
   * "Argument validation"; docs/tool-service.md).
   */
  @IsBoolean({ message: 'must be true or false' })
  validateArguments = true;

  /**
   * true: each tool is published only as an operator approved it; a new tool, or a change
   * beyond the cosmetic rule, is held for review (docs/operations.md §6 "Pinned tool
   * definitions").
   */
  @IsBoolean({ message: 'must be true or false' })
  pinned = false;

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => BundleAuthorizationConfig)
  authorization: BundleAuthorizationConfig = new BundleAuthorizationConfig();

  /**
   * What an agent sees of a 5xx answer's body: `show` (an excerpt, with anything that looks
   * like an address or credential masked) or `hide` (the status only). Absent: `show` in the
   * local profile, `hide` elsewhere. 4xx bodies are always shown, masked, since they explain
   * bad input.
   */
  @IsOptional()
  @IsIn(SERVER_ERROR_BODY_MODES, {
    message: `must be one of ${SERVER_ERROR_BODY_MODES.join(', ')}`,
  })
  serverErrorBody?: ServerErrorBodyMode;
}

/** The contract's legacy mode: discovery disabled, tools from one local manifest-format file (local profile only). */
export class LocalFixtureConfig {
  @IsString({ message: 'is required: a file path (file:./path or ./path)' })
  @MinLength(1, { message: 'is required: a file path (file:./path or ./path)' })
  file!: string;

  @IsString({ message: 'is required: an http(s) URL' })
  baseEndpoint!: string;
}

export class ExecutionConfig {
  /** A Tool Service answer larger than this many bytes becomes an isError result. */
  @IsInt({ message: 'must be a positive integer (bytes)' })
  @Min(1, { message: 'must be a positive integer (bytes)' })
  maxResponseBytes = 8 * 1_048_576;

  /** Longest error text of a Tool Service copied into an isError result, in characters. */
  @IsInt({ message: 'must be a positive integer (characters)' })
  @Min(1, { message: 'must be a positive integer (characters)' })
  maxErrorTextChars = 300;

  /**
   * Bytes of Tool Service answers the gateway may hold at once, over all calls in flight; a
   * call whose answer would go past it ends at once as an isError "the gateway is busy"
   * (never a hang). The default fits the chart's 512 Mi memory limit: an answer costs a few
   * times its size until it is written (bytes, text, JSON-RPC framing).
   */
  @IsInt({ message: 'must be a positive integer (bytes)' })
  @Min(1, { message: 'must be a positive integer (bytes)' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'must be at most 2^53 - 1 (bytes)' })
  maxInFlightAnswerBytes = 48 * 1_048_576;

  /** Calls one bundle may have running at once; one more is an isError "the gateway is busy". */
  @IsInt({ message: 'must be a positive integer (calls)' })
  @Min(1, { message: 'must be a positive integer (calls)' })
  @Max(100_000, { message: 'must be at most 100000 (calls)' })
  maxConcurrentCallsPerBundle = 256;

  /** Open connections per Tool Service origin (scheme://host:port); more calls wait for one. */
  @IsInt({ message: 'must be a positive integer (connections)' })
  @Min(1, { message: 'must be a positive integer (connections)' })
  @Max(100_000, { message: 'must be at most 100000 (connections)' })
  maxConnectionsPerOrigin = 256;

  /**
   * Requests one caller may have running at once on one origin's pool of connections (with
   * mcp.auth on); one more waits, within its timeout, for one of the caller's own to end (a
   * listen is not opened, and is tried again). Unset: a quarter of the smaller of
   * maxConnectionsPerOrigin and maxConcurrentCallsPerBundle (docs/operations.md §1).
   */
  @IsOptional()
  @IsInt({ message: 'must be a positive integer (calls)' })
  @Min(1, { message: 'must be a positive integer (calls)' })
  @Max(100_000, { message: 'must be at most 100000 (calls)' })
  maxConcurrentCallsPerCaller?: number;
}

export class SessionConfig {
  /** How long a sealed Mcp-Session-Id stays valid, in seconds. */
  @IsInt({ message: 'must be a positive integer (seconds)' })
  @Min(1, { message: 'must be a positive integer (seconds)' })
  @Max(30 * 86_400, { message: 'must be at most 30 days (seconds)' })
  ttlSeconds = 86_400;

  /**
   * How long a `requestState` envelope the gateway mints for an `input_required` result stays
   * valid, in seconds (docs/operations.md §11 "Multi round-trip and era bridging"): a retry after
   * it is -32602.
   */
  @IsInt({ message: 'must be a positive integer (seconds)' })
  @Min(1, { message: 'must be a positive integer (seconds)' })
  @Max(86_400, { message: 'must be at most 86400 (seconds)' })
  requestStateTtlSeconds = 600;

  /**
   * How long, in ms, the gateway waits for a client's input during era bridging
   * (docs/operations.md §11 "Multi round-trip and era bridging"): a 2025 upstream's call parked for
   * a 2026 client's retry, or a 2025 client's answer to an elicitation/sampling request made for a
   * 2026 upstream. Abandoned after it.
   */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1000, { message: 'must be at least 1000 (ms)' })
  @Max(3_600_000, { message: 'must be at most 3600000 (ms)' })
  pendingInputMillis = 120_000;
}

/**
 * The optional shared state in Redis (REDIS_URL, or Sentinel, or Cluster): where it is, key
 * layout, lifetime and time bounds.
 */
export class RedisConfig {
  /** First segment of every key: <keyPrefix>:{<identity>:<bundleId>}:manifest and …:fetched-at. */
  @IsString({ message: 'must be a key prefix ([A-Za-z0-9._-]{1,64})' })
  @Matches(IDENTIFIER_PATTERN, { message: 'must match [A-Za-z0-9._-]{1,64}' })
  keyPrefix = 'mcp-gateway';

  /** How long a last-good copy lives in Redis after its last write, in seconds (7 days). */
  @IsInt({ message: 'must be a positive integer (seconds)' })
  @Min(1, { message: 'must be a positive integer (seconds)' })
  ttlSeconds = 604_800;

  /** Bound of every Redis command in ms; a slower Redis counts as unavailable. */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(60_000, { message: 'must be at most 60000 (ms)' })
  commandTimeoutMillis = 300;

  /** Bound in ms of connecting (and of the wait for Redis at warm start). */
  @IsInt({ message: 'must be a positive integer (ms)' })
  @Min(1, { message: 'must be a positive integer (ms)' })
  @Max(60_000, { message: 'must be at most 60000 (ms)' })
  connectTimeoutMillis = 1000;

  /**
   * Redis Sentinel: the sentinels (host:port) that find the master named `masterName`
   * (docs/operations.md §5 "Redis: one server, Sentinel or Cluster"). Not with REDIS_URL or
   * clusterNodes.
   */
  @IsOptional()
  @IsArray({ message: 'must be a list of host:port entries' })
  @ArrayNotEmpty({ message: 'must name at least one sentinel (host:port)' })
  @IsString({ each: true, message: 'each entry must be host:port' })
  @Matches(REDIS_NODE_PATTERN, { each: true, message: 'each entry must be host:port' })
  sentinels?: string[];

  /** The master's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  @IsOptional()
  @IsString({ message: 'must be a Sentinel master name' })
  @Matches(/^[A-Za-z0-9._-]{1,128}$/, { message: 'must match [A-Za-z0-9._-]{1,128}' })
  masterName?: string;

  /**
   * Redis Cluster: seed nodes (host:port); the rest of the cluster is discovered from them.
   * Every key of one gateway carries the `{<identity>…}` hash tag, so what a script or a
   * transaction touches lives in one slot.
   */
  @IsOptional()
  @IsArray({ message: 'must be a list of host:port entries' })
  @ArrayNotEmpty({ message: 'must name at least one cluster node (host:port)' })
  @IsString({ each: true, message: 'each entry must be host:port' })
  @Matches(REDIS_NODE_PATTERN, { each: true, message: 'each entry must be host:port' })
  clusterNodes?: string[];
}

/**
 * Who may reach /mcp from a browser, and under which host names (docs/operations.md §8; MCP
 * Streamable HTTP "Security Warning"). Entry syntax and matching: http-access-patterns.ts.
 */
export class HttpAccessConfig {
  /**
   * Origins allowed to call /mcp (CORS included). Empty (the default): every request that
   * carries an `Origin` header is refused with 403; requests without one (every non-browser
   * client) pass.
   */
  @IsArray({
    message: 'must be a list of origins ("scheme://host[:port]", "scheme://host:*" or "null")',
  })
  @IsString({ each: true, message: 'each entry must be a string' })
  allowedOrigins: string[] = [];

  /** Host names (and ports) the `Host` header must name. Empty (the default): not checked. */
  @IsArray({ message: 'must be a list of hosts ("host[:port]" or "host:*")' })
  @IsString({ each: true, message: 'each entry must be a string' })
  allowedHosts: string[] = [];

  /**
   * Most connections the /mcp listener keeps open at once; more are closed as they arrive
   * (docs/operations.md §1, `http.maxConnections`). Absent: derived at boot from the process's
   * open-file limit, leaving room for the management listener, Tool Service and Redis connections
   * (half of what is left after 512, between 64 and 100000).
   */
  @IsOptional()
  @IsInt({ message: 'must be a positive integer (connections)' })
  @Min(1, { message: 'must be a positive integer (connections)' })
  @Max(1_000_000, { message: 'must be at most 1000000 (connections)' })
  maxConnections?: number;

  /**
   * true (the default): MCP 2026-07-28 requests (per-request envelope, server/discover, cache
   * hints) are served beside the 2025 sessions, through the dual-era classifier
   * (docs/operations.md §11). false: a legacy-only gateway; every request is served by the 2025
   * rules, and a 2026 probe is answered so that 2026 clients fall back to initialize (wire notes
   * G-12).
   */
  @IsBoolean({ message: 'must be true or false' })
  modernEra = true;
}

/** 2026-07-28 cache hints (docs/operations.md §11 "Cache hints"). */
export class CacheConfig {
  /** The largest ttlMs the gateway puts on a result, in ms (a bundle's time to its next pull is capped by it). */
  @IsInt({ message: 'must be an integer >= 0 (ms)' })
  @Min(0, { message: 'must be an integer >= 0 (ms)' })
  @Max(86_400_000, { message: 'must be at most 86400000 (one day, in ms)' })
  maxTtlMillis = 60_000;
}

/**
 * Notification streams (docs/operations.md §11 "Notification streams"): 2026 `subscriptions/listen`
 * streams and 2025 session GET streams, which carry the catalog's list_changed notifications (and,
 * on listen, those of 2026 upstreams).
 */
export class ListenConfig {
  /**
   * Most notification streams open at once on one replica (listen and GET together); past it a
   * listen is refused in-band with -32603 "Subscription limit reached" (as the v2 SDK does) and
   * a GET with 503.
   */
  @IsInt({ message: 'must be a positive integer (streams)' })
  @Min(1, { message: 'must be a positive integer (streams)' })
  @Max(100_000, { message: 'must be at most 100000 (streams)' })
  maxStreams = 1024;

  /**
   * With `mcp.auth` on, most notification streams one caller (the token's `sub`, else its
   * `client_id`) keeps open at once on one replica, listen and GET together: a few tabs or
   * windows of one agent. Past it a listen is refused in-band with -32603 and a GET with 429,
   * so one caller cannot take the replica's `maxStreams` from everyone else (docs/security.md).
   */
  @IsInt({ message: 'must be a positive integer (streams)' })
  @Min(1, { message: 'must be a positive integer (streams)' })
  @Max(100_000, { message: 'must be at most 100000 (streams)' })
  maxStreamsPerCaller = 8;

  /**
   * Most bytes of messages one stream may hold while its client does not read (the socket
   * does not drain): past it the stream is closed (an abrupt end: the client may reconnect)
   * and counted in `mcp_gateway_notification_streams_closed_total{reason="slow_consumer"}`,
   * so a client that stops reading cannot make the gateway buffer without end.
   */
  @IsInt({ message: 'must be an integer between 4096 and 67108864 (bytes)' })
  @Min(4096, { message: 'must be an integer between 4096 and 67108864 (bytes)' })
  @Max(67_108_864, { message: 'must be an integer between 4096 and 67108864 (bytes)' })
  maxQueuedBytes = 1_048_576;

  /** Interval of the keep-alive comment (`: keepalive`) on every open stream, in ms (the v2 SDK's is 15 s). */
  @IsInt({ message: 'must be an integer between 100 and 300000 (ms)' })
  @Min(100, { message: 'must be an integer between 100 and 300000 (ms)' })
  @Max(300_000, { message: 'must be an integer between 100 and 300000 (ms)' })
  keepAliveMillis = 15_000;

  /**
   * With `mcp.auth` on, how often an open stream's caller is checked again, in seconds: the
   * Authorization value that opened the stream is authenticated as a request's is (a
   * remembered answer within `mcp.auth.introspectionCacheSeconds` included), and the stream is
   * closed when the token is refused or its grant (`mcp.access`) changed, so a stream lives no
   * longer than its token even when the token has no `exp` or is revoked (docs/security.md).
   */
  @IsInt({ message: 'must be an integer between 1 and 3600 (seconds)' })
  @Min(1, { message: 'must be an integer between 1 and 3600 (seconds)' })
  @Max(3600, { message: 'must be an integer between 1 and 3600 (seconds)' })
  recheckSeconds = 60;
}

/**
 * Bundle tools the gateway runs as tasks for 2026-07-28 clients that declare the Tasks extension
 * (docs/operations.md §10 "Tasks"): how long a task is kept, the poll interval clients are given,
 * and how many one replica keeps without Redis.
 */
export class TasksConfig {
  /** How long a task (its status and result) is kept after it was created, in seconds: `ttlMs`. */
  @IsInt({ message: 'must be an integer between 1 and 604800 (seconds)' })
  @Min(1, { message: 'must be an integer between 1 and 604800 (seconds)' })
  @Max(604_800, { message: 'must be an integer between 1 and 604800 (seconds)' })
  ttlSeconds = 3600;

  /** The `pollIntervalMs` clients are given, in ms. */
  @IsInt({ message: 'must be an integer between 100 and 60000 (ms)' })
  @Min(100, { message: 'must be an integer between 100 and 60000 (ms)' })
  @Max(60_000, { message: 'must be an integer between 100 and 60000 (ms)' })
  pollIntervalMillis = 1000;

  /**
   * Without Redis, most tasks one replica keeps: past it the oldest finished one is dropped, and
   * with none finished a new task is refused (-32603).
   */
  @IsInt({ message: 'must be an integer between 1 and 1000000 (tasks)' })
  @Min(1, { message: 'must be an integer between 1 and 1000000 (tasks)' })
  @Max(1_000_000, { message: 'must be an integer between 1 and 1000000 (tasks)' })
  maxTasks = 10_000;

  /**
   * Most tasks one caller (a token's `sub`, else its `client_id`; one for all without auth) has
   * kept at once, in memory per replica and in Redis for all: past it the caller's oldest ended
   * one is dropped (memory) or a new task is refused (Redis, until one expires), so one caller
   * cannot fill the store for everyone.
   */
  @IsInt({ message: 'must be an integer between 1 and 1000000 (tasks)' })
  @Min(1, { message: 'must be an integer between 1 and 1000000 (tasks)' })
  @Max(1_000_000, { message: 'must be an integer between 1 and 1000000 (tasks)' })
  maxTasksPerCaller = 100;

  /**
   * Largest tool result a task keeps, in bytes of JSON: a larger one ends the task failed with
   * the reason (the tool ran; called without the Tasks extension it answers in full).
   */
  @IsInt({ message: 'must be an integer between 1024 and 67108864 (bytes)' })
  @Min(1024, { message: 'must be an integer between 1024 and 67108864 (bytes)' })
  @Max(67_108_864, { message: 'must be an integer between 1024 and 67108864 (bytes)' })
  maxResultBytes = 1_048_576;

  /**
   * Without Redis, most bytes of results one replica keeps: past it the oldest ended tasks are
   * dropped.
   */
  @IsInt({ message: 'must be an integer between 1048576 and 17179869184 (bytes)' })
  @Min(1_048_576, { message: 'must be an integer between 1048576 and 17179869184 (bytes)' })
  @Max(17_179_869_184, { message: 'must be an integer between 1048576 and 17179869184 (bytes)' })
  maxStoredBytes = 134_217_728;

  /**
   * How long the replica running a task's call vouches for it, in seconds, renewed every third
   * of it: a task whose replica died is reported failed once this has passed.
   */
  @IsInt({ message: 'must be an integer between 3 and 300 (seconds)' })
  @Min(3, { message: 'must be an integer between 3 and 300 (seconds)' })
  @Max(300, { message: 'must be an integer between 3 and 300 (seconds)' })
  leaseSeconds = 15;
}

/** SIGTERM handling. */
export class ShutdownConfig {
  /** How long in-flight requests may run after SIGTERM before their connections are cut, in seconds. */
  @IsInt({ message: 'must be a positive integer (seconds)' })
  @Min(1, { message: 'must be a positive integer (seconds)' })
  @Max(3600, { message: 'must be at most 3600 (one hour, in seconds)' })
  gracePeriodSeconds = 30;
}

/**
 * OpenTelemetry traces (docs/operations.md §3 "Traces"): off unless `endpoint` is set.
 */
export class TracingConfig {
  /** The OTLP/HTTP traces endpoint (a collector's …:4318/v1/traces); unset: no tracing. */
  @IsOptional()
  @IsString({ message: 'must be an http(s) URL (the OTLP/HTTP traces endpoint)' })
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'must be an http(s) URL (the OTLP/HTTP traces endpoint)',
  })
  endpoint?: string;

  /**
   * Share of the traces the gateway starts that are sampled, 0..1; a request whose caller sent
   * a trace context keeps the caller's decision (parent-based). 1 as OpenTelemetry's default;
   * lower it where every call is traced at a cost the collector feels.
   */
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'must be a number from 0 to 1' })
  @Min(0, { message: 'must be a number from 0 to 1' })
  @Max(1, { message: 'must be a number from 0 to 1' })
  samplingRatio = 1;

  /** `service.name` of the gateway's spans. */
  @IsString({ message: 'must be a service name' })
  @Matches(/^[\x21-\x7e]{1,128}$/, { message: 'must be 1 to 128 visible characters' })
  serviceName = 'mcp-gateway';

  /** Bound of one export to the endpoint, in ms. */
  @IsInt({ message: 'must be an integer between 100 and 60000 (ms)' })
  @Min(100, { message: 'must be an integer between 100 and 60000 (ms)' })
  @Max(60_000, { message: 'must be an integer between 100 and 60000 (ms)' })
  exportTimeoutMillis = 10_000;
}

export class McpConfig {
  /** serverInfo.name on /mcp and the namespace of this gateway's Redis keys. */
  @IsString({ message: 'is required: the gateway identity ([A-Za-z0-9._-]{1,64})' })
  @Matches(IDENTIFIER_PATTERN, { message: 'must match [A-Za-z0-9._-]{1,64}' })
  identity!: string;

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => RegistryConfig)
  registry: RegistryConfig = new RegistryConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => DiscoveryConfig)
  discovery: DiscoveryConfig = new DiscoveryConfig();

  @IsArray({ message: 'must be a list of bundles' })
  @IsObject({
    each: true,
    message: 'each bundle must be a mapping (id, manifestUrl, baseEndpoint, namePrefix, …)',
  })
  @ValidateNested({ each: true })
  @Type(() => BundleConfig)
  bundles: BundleConfig[] = [];

  /**
   * Upstream MCP servers whose tools, resources and prompts join the catalog
   * (docs/operations.md §10).
   */
  @IsArray({ message: 'must be a list of upstream MCP servers' })
  @IsObject({
    each: true,
    message: 'each upstream must be a mapping (id, url, namePrefix, …)',
  })
  @ValidateNested({ each: true })
  @Type(() => UpstreamConfig)
  upstreams: UpstreamConfig[] = [];

  /** Named views of the catalog, each on /mcp/servers/{id} (docs/operations.md §16). */
  @IsArray({ message: 'must be a list of virtual servers' })
  @IsObject({
    each: true,
    message: 'each virtual server must be a mapping (id, sources, tools, tags, …)',
  })
  @ValidateNested({ each: true })
  @Type(() => VirtualServerConfig)
  virtualServers: VirtualServerConfig[] = [];

  /** Tags given to tools by source and name pattern (docs/operations.md §16). */
  @IsArray({ message: 'must be a list of {source, tools, tags}' })
  @IsObject({ each: true, message: 'each entry must be a mapping (source, tools, tags)' })
  @ValidateNested({ each: true })
  @Type(() => ToolTagsConfig)
  toolTags: ToolTagsConfig[] = [];

  /** The gateway's search tools instead of the whole list on /mcp (docs/operations.md §16). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ToolSearchConfig)
  toolSearch: ToolSearchConfig = new ToolSearchConfig();

  @IsOptional()
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => LocalFixtureConfig)
  localFixture?: LocalFixtureConfig;

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ExecutionConfig)
  execution: ExecutionConfig = new ExecutionConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => SessionConfig)
  session: SessionConfig = new SessionConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => RedisConfig)
  redis: RedisConfig = new RedisConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ShutdownConfig)
  shutdown: ShutdownConfig = new ShutdownConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => TracingConfig)
  tracing: TracingConfig = new TracingConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => HttpAccessConfig)
  http: HttpAccessConfig = new HttpAccessConfig();

  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => CacheConfig)
  cache: CacheConfig = new CacheConfig();

  /**
   * Token buckets per caller and per (caller, tool)
   * (docs/operations.md §14 "Rate limits per caller").
   */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => RateLimitsConfig)
  rateLimits: RateLimitsConfig = new RateLimitsConfig();

  /** The audit line per tools/call (docs/operations.md §14 "Audit"). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => AuditConfig)
  audit: AuditConfig = new AuditConfig();

  /** Bundle tools run as tasks (docs/operations.md §10 "Tasks"). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => TasksConfig)
  tasks: TasksConfig = new TasksConfig();
  /** The resource server for /mcp (docs/operations.md §13): `none` or `jwt`. */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => AuthConfig)
  auth: AuthConfig = new AuthConfig();

  /**
   * Per-request grants (docs/operations.md §13 "Access"); absent: every authenticated caller sees
   * everything.
   */
  @IsOptional()
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => AccessConfig)
  access?: AccessConfig;
  /** The operator console (docs/console.md). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ConsoleConfig)
  console: ConsoleConfig = new ConsoleConfig();

  /** The management listener: which `Host` names it serves (docs/operations.md §12). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ManagementConfig)
  management: ManagementConfig = new ManagementConfig();

  /** The /admin registration API (docs/operations.md §15). */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => AdminConfig)
  admin: AdminConfig = new AdminConfig();

  /**
   * subscriptions/listen and the 2025 GET stream (docs/operations.md §11 "Notification streams").
   */
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => ListenConfig)
  listen: ListenConfig = new ListenConfig();
}

/** The root of a config file: everything lives under `mcp:`. */
export class ConfigFileRoot {
  @IsDefined({ message: 'is required: the file has no top-level "mcp:" tree' })
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => McpConfig)
  mcp!: McpConfig;
}
