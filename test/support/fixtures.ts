/** Small manifest builders for the tests (contract §5). */
export interface ToolSpec {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: Record<string, unknown>;
  readonly title?: string;
  readonly annotations?: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  readonly meta?: Record<string, unknown>;
}

export function tool(spec: ToolSpec): Record<string, unknown> {
  return {
    name: spec.name,
    ...(spec.title !== undefined ? { title: spec.title } : {}),
    description: spec.description ?? `[marker:${spec.name}] a test tool`,
    inputSchema: spec.inputSchema ?? { type: 'object', properties: {} },
    ...(spec.outputSchema !== undefined ? { outputSchema: spec.outputSchema } : {}),
    ...(spec.annotations !== undefined ? { annotations: spec.annotations } : {}),
    _meta: { version: '1.0.0', ...spec.meta },
  };
}

export function manifest(
  bundleId: string,
  tools: readonly Record<string, unknown>[],
  revision = 'r1',
): Record<string, unknown> {
  return { bundleId, revision, tools };
}

/** The `mcp:` tree for a gateway in front of the given bundles, with fast test timings. */
export function gatewayConfig(
  bundles: readonly Record<string, unknown>[],
  overrides: {
    registry?: Record<string, unknown>;
    discovery?: Record<string, unknown>;
    redis?: Record<string, unknown>;
    shutdown?: Record<string, unknown>;
    execution?: Record<string, unknown>;
    /** `mcp.upstreams[]`: upstream MCP servers beside the bundles (docs/operations.md §10). */
    upstreams?: readonly Record<string, unknown>[];
  } = {},
): Record<string, unknown> {
  return {
    identity: 'mcp-gateway-test',
    // Tests call unknown tools back to back and expect each to refresh (contract §8); the
    // throttle of the default config (1000 ms) has a test of its own.
    registry: {
      refreshIntervalSeconds: 60,
      refreshJitterSeconds: 0,
      notFoundRefreshMinIntervalMillis: 0,
      ...overrides.registry,
    },
    discovery: {
      enabled: true,
      connectTimeoutMillis: 500,
      // a first pull that times out leaves the gateway unready until the next round, 60 s away
      // (contract §7 readiness): 1500 ms failed it on a 2-core machine busy with other suites
      readTimeoutMillis: 5000,
      maxToolsPerBundle: 100,
      maxToolsTotal: 200,
      maxManifestBytes: 1048576,
      maxToolTimeoutMillis: 5000,
      ...overrides.discovery,
    },
    bundles,
    ...(overrides.upstreams ? { upstreams: overrides.upstreams } : {}),
    ...(overrides.redis ? { redis: overrides.redis } : {}),
    ...(overrides.shutdown ? { shutdown: overrides.shutdown } : {}),
    ...(overrides.execution ? { execution: overrides.execution } : {}),
  };
}

export function bundle(
  id: string,
  service: { manifestUrl: string; baseEndpoint: string },
  namePrefix: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    manifestUrl: service.manifestUrl,
    baseEndpoint: service.baseEndpoint,
    namePrefix,
    enabled: true,
    ...extra,
  };
}

/**
 * One `mcp.upstreams[]` entry: an upstream MCP server at `url`
 * (docs/operations.md §10 "Configuration").
 */
export function upstream(
  id: string,
  url: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { id, url, ...extra };
}
