import type { UpstreamProtocolSetting } from './upstream-config.model';
import type { AddressRange, UrlPattern } from './admin-url-patterns';
import type { McpConfig, ServerErrorBodyMode } from './mcp-config.model';
import type { RedisServer } from './redis-server';

/** Where the Authorization header of a tool call comes from (contract §10). */
export type ResolvedAuthorization =
  | { readonly mode: 'none' }
  | { readonly mode: 'passthrough' }
  /** `value` is a secret: never log it. */
  | { readonly mode: 'static'; readonly value: string }
  | TokenExchangeAuthorization;

/**
 * RFC 8693 token exchange towards one source
 * (docs/operations.md §14 "Credentials towards sources"): the caller's token is exchanged at
 * `tokenEndpoint` (client authentication `client_secret_basic`) for one whose audience is
 * `audience`; list pulls, which have no caller, use the client-credentials grant with the same
 * client and audience.
 */
export interface TokenExchangeAuthorization {
  readonly mode: 'tokenExchange';
  readonly tokenEndpoint: string;
  readonly clientId: string;
  /** A secret: never log it. */
  readonly clientSecret: string;
  readonly audience: string;
  /** Space-separated scopes to ask for; undefined: none asked. */
  readonly scope?: string;
}

/** One configured bundle after validation; the only source of routing addresses (contract §1). */
export interface BundleDefinition {
  readonly id: string;
  readonly manifestUrl: string;
  readonly baseEndpoint: string;
  readonly namePrefix: string;
  readonly enabled: boolean;
  /** Absolute path of the local-profile cold-start manifest, when configured. */
  readonly fallbackManifestFile?: string;
  readonly authorization: ResolvedAuthorization;
  /** Whether a 5xx answer's body excerpt reaches the agent (resolved: profile default applied). */
  readonly serverErrorBody: ServerErrorBodyMode;
  /**
   * Whether calls' arguments are checked against the tool's inputSchema before they are sent
   * (docs/operations.md §6 "Argument validation"); absent: true, a bundle's default.
   */
  readonly validateArguments?: boolean;
  /** Tools published only as approved (docs/operations.md §6 "Pinned tool definitions"); absent: false. */
  readonly pinned?: boolean;
  /**
   * Legacy local fixture only (discovery disabled, local profile): the manifest is read from
   * this absolute path instead of manifestUrl.
   */
  readonly manifestFile?: string;
}

/** One configured upstream MCP server after validation (docs/operations.md §10 "Configuration"). */
export interface UpstreamDefinition {
  readonly id: string;
  /** The upstream's MCP endpoint; never shown to clients or on status endpoints. */
  readonly url: string;
  /** Prepended to its tool and prompt names; `<id>__` unless configured ("" for a sole source). */
  readonly namePrefix: string;
  readonly enabled: boolean;
  readonly protocol: UpstreamProtocolSetting;
  /**
   * `live`: its lists are fetched per request for the caller, never from the catalog
   * snapshot (docs/operations.md §11 "Live lists"); `snapshot`: pulled on the refresh schedule.
   */
  readonly lists: 'snapshot' | 'live';
  /** TCP connect timeout, ms. */
  readonly connectMillis: number;
  /**
   * Deadline of one list pull, every page included, ms; also of one live list fetch
   * (docs/operations.md §11 "Live lists").
   */
  readonly listMillis: number;
  /** Deadline of one call, ms (default discovery.maxToolTimeoutMillis). */
  readonly callMillis: number;
  /** Caller headers copied to the upstream on calls, lower-case. */
  readonly forwardHeaders: readonly string[];
  readonly authorization: ResolvedAuthorization;
  /**
   * The ttlMs (ms) its lists contribute to cache hints when it sends none
   * (docs/operations.md §11 "Cache hints"); absent: 0.
   */
  readonly cacheTtlMillis?: number;
  /** The cacheScope its lists contribute when it sends none; absent: private. */
  readonly cacheScope?: 'public' | 'private';
  /**
   * Whether calls' arguments are checked against the tool's listed inputSchema before they are
   * sent (docs/operations.md §6 "Argument validation"); absent: false, an upstream's default.
   */
  readonly validateArguments?: boolean;
  /** Tools published only as approved (docs/operations.md §6 "Pinned tool definitions"); absent: false. */
  readonly pinned?: boolean;
  /**
   * The runtime registration this definition was applied from (its stored createdAt and a
   * digest of its fields, the same on every replica); absent for a configured upstream. A registration
   * deleted, changed or posted again under the same id is another one: the connections, relay
   * ids and bridged rounds of the earlier one are bound to this and never reach the next
   * (docs/operations.md §15 "Deleted means gone").
   */
  readonly registration?: string;
}

/**
 * What an upstream's kept state is bound to besides its id (2026 requestState envelopes, task
 * ids, the last good lists in Redis): the server it was had from (its URL) and, for a runtime
 * registration, which registration (docs/operations.md §15 "Deleted means gone"). For a
 * configured upstream it is the URL alone. Never shown: it is digested where it is kept.
 */
/**
 * When the runtime registration `upstream` was applied from was created (ms since the epoch,
 * the same on every replica); undefined for a configured upstream.
 */
export function registeredAt(
  upstream: Pick<UpstreamDefinition, 'registration'>,
): number | undefined {
  const createdAt = Number(upstream.registration?.split('.', 1)[0]);
  return Number.isFinite(createdAt) ? createdAt : undefined;
}

/**
 * Whether two definitions are the same upstream: its id, and for a runtime registration the
 * same registration (one deleted and posted again under the id, or changed, is another one:
 * docs/operations.md §15 "Deleted means gone").
 */
export function sameUpstream(
  a: Pick<UpstreamDefinition, 'id' | 'registration'>,
  b: Pick<UpstreamDefinition, 'id' | 'registration'>,
): boolean {
  return a.id === b.id && a.registration === b.registration;
}

export function upstreamSource(upstream: Pick<UpstreamDefinition, 'url' | 'registration'>): string {
  return upstream.registration === undefined
    ? upstream.url
    : `${upstream.url}\u0000${upstream.registration}`;
}

/** The resolved `mcp.admin` section and `MCP_ADMIN_TOKEN` (docs/operations.md §15). */
export interface AdminSettings {
  /** MCP_ADMIN_TOKEN: the static admin bearer token; a secret, never logged. undefined when unset. */
  readonly token?: string;
  /**
   * true outside the `local` profile when `token` is shorter than 32 characters: accepted, and
   * warned about at boot (a short token can be guessed).
   */
  readonly weakToken?: boolean;
  /** mcp.admin.allowLoopback, or true under the local profile when absent. */
  readonly allowLoopback: boolean;
  /** mcp.admin.allowedUpstreamUrls, parsed; empty: every http(s) URL. */
  readonly urlPatterns: readonly UrlPattern[];
  /** mcp.admin.allowedAddressRanges, parsed. */
  readonly allowedRanges: readonly AddressRange[];
  /** mcp.admin.scope: the scope an admin JWT must carry. */
  readonly scope: string;
  /**
   * The value of the env variable a registered upstream's `authorization.valueEnv` names
   * (undefined when unset): registrations carry secret names, never values
   * (docs/operations.md §15 "Routes").
   */
  readonly secretEnv: (name: string) => string | undefined;
  /** Whether a registration may name this env variable (mcp.admin.allowedSecretEnv). */
  readonly secretEnvAllowed: (name: string) => boolean;
}

/** The id of the pseudo-bundle that serves the legacy local fixture; its file's bundleId must match. */
export const LOCAL_FIXTURE_BUNDLE_ID = 'local-fixture';

/** A key that seals Mcp-Session-Id tokens (AES-256-GCM). The first key of the list seals; all open. */
export interface SessionKey {
  readonly kid: string;
  /** 32 bytes. */
  readonly key: Buffer;
}

/**
 * The whole validated configuration, built once by `loadGatewayConfig` from the YAML files
 * and the environment. Nothing else in the gateway reads `process.env` or config files.
 */
export interface GatewayConfig {
  /** APP_PROFILE, default "local". */
  readonly profile: string;
  /** Config files read, in merge order (for the boot log). */
  readonly sources: readonly string[];
  readonly mcp: McpConfig;
  /**
   * The tool sources in config order: the configured bundles when discovery is enabled, or the
   * one `local-fixture` pseudo-bundle (manifestFile set) in the legacy local mode.
   */
  readonly bundles: readonly BundleDefinition[];
  /** The configured upstream MCP servers in config order (docs/operations.md §10). */
  readonly upstreams: readonly UpstreamDefinition[];
  readonly server: {
    /** HOST, default 0.0.0.0. */
    readonly host: string;
    /** PORT, default 8080: POST /mcp. */
    readonly port: number;
    /** MANAGEMENT_PORT, default 9090: /actuator/*. */
    readonly managementPort: number;
    /** MANAGEMENT_HOST, default HOST: the address the management listener binds to. */
    readonly managementHost: string;
    /**
     * MCP_HTTP_SERVER, default `fastify`: which listener serves /mcp, McpController on Nest's
     * fastify adapter, or McpHttpServer on plain node:http (opt-in; docs/benchmarks.md).
     */
    readonly mcpListener: McpListenerKind;
    /**
     * MCP_HEAP_GROWING_PERCENT: V8's old-generation growing factor as a percent over 1 (set at
     * boot with `v8.setFlagsFromString`); undefined: V8's own (docs/operations.md §1).
     */
    readonly heapGrowingPercent?: number;
    /** mcp.http.maxConnections, or its default from the open-file limit: most /mcp connections at once. */
    readonly maxMcpConnections: number;
  };
  /**
   * Secrets of `mcp.auth` read from the environment variables it names (docs/operations.md §13);
   * never logged. Absent in configs built by hand (tests).
   */
  readonly authSecrets?: { readonly introspectionClientSecret?: string };
  /** REDIS_URL, or the Sentinel or Cluster of `mcp.redis`; undefined means in-memory only. */
  readonly redisServer?: RedisServer;
  /**
   * MCP_SESSION_KEYS, or one random key in the local profile when it is unset. Empty (unset
   * outside the local profile): stateless legacy mode, no Mcp-Session-Id is issued.
   */
  readonly sessionKeys: readonly SessionKey[];
  /** true when the session key was generated at boot (sessions do not survive a restart). */
  readonly sessionKeysEphemeral: boolean;
  /** LOG_LEVEL, default info (pino levels, or silent). */
  readonly logLevel: LogLevel;
  /** The gateway's version (package.json), for serverInfo.version. */
  readonly version: string;
  /**
   * The registration API's settings (docs/operations.md §15); absent in hand-built test configs.
   */
  readonly admin?: AdminSettings;
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

export const MCP_LISTENER_KINDS = ['fastify', 'node'] as const;
export type McpListenerKind = (typeof MCP_LISTENER_KINDS)[number];

/** pino's levels, plus silent. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
