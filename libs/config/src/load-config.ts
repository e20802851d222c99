import { isAbsolute, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from './class-validator';
import { accessProblems, authProblems } from './auth-rules';
import { ConfigValidationError } from './config-errors';
import { crossFieldProblems } from './config-rules';
import { fieldPath, invalid, renderProblem, type ConfigProblem } from './config-problem';
import { prefixProblems } from './prefix-rules';
import { readConfigSources } from './config-sources';
import { defaultMaxConnections, openFileLimit } from './connection-limit';
import { expandEnvPlaceholders } from './env-placeholders';
import { readEnvSettings } from './env-settings';
import { redisServerFrom } from './redis-server';
import { httpAccessProblems } from './http-access-patterns';
import { managementProblems } from './management-host-patterns';
import {
  LOCAL_FIXTURE_BUNDLE_ID,
  type BundleDefinition,
  type GatewayConfig,
  type ResolvedAuthorization,
  type UpstreamDefinition,
} from './gateway-config';
import { adminPatternProblems, parseAddressRange, parseUrlPattern } from './admin-url-patterns';
import {
  ConfigFileRoot,
  type BundleAuthorizationConfig,
  type BundleConfig,
  type McpConfig,
} from './mcp-config.model';
import type { UpstreamConfig } from './upstream-config.model';
import { upstreamNamePrefix, upstreamProblems } from './upstream-rules';

type Env = Readonly<Record<string, string | undefined>>;

export interface LoadConfigOptions {
  /** Usually process.env; the only place the gateway reads it. */
  readonly env: Env;
  /** Base for config/ and relative file paths; the repository root when run as documented. */
  readonly cwd: string;
  /** serverInfo.version. */
  readonly version: string;
}

/** `//user:password@` of a URL anywhere in a described value: credentials are never echoed. */
const URL_USERINFO = /\/\/[^/@\s"]*@/g;
/** A JSON string literal (escapes included): matched in one linear pass. */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * The query or fragment of each URL-like string (a `/` before its `?` or `#`) in a described
 * value, cut to `?…`: API keys travel there, and problem texts never quote them
 * (docs/operations.md §10). One pass per literal, so a value of any length is cut in linear time.
 */
function withoutUrlQueries(json: string): string {
  return json.replace(JSON_STRING, (literal) => {
    const cut = literal.search(/[?#]/);
    return cut > 0 && literal.slice(0, cut).includes('/')
      ? `${literal.slice(0, cut + 1)}…"`
      : literal;
  });
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const json = JSON.stringify(value)?.replace(URL_USERINFO, '//…@');
  const text = json === undefined ? undefined : withoutUrlQueries(json);
  return text === undefined ? typeof value : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Flattens class-validator's tree into "mcp.bundles[0].id: reason (got …)" lines. */
export function flattenValidationErrors(
  errors: readonly ValidationError[],
  parent: string,
): ConfigProblem[] {
  const lines: ConfigProblem[] = [];
  for (const error of errors) {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : fieldPath(parent, error.property);
    // a list where a mapping belongs: said once; its entries were read as that mapping's
    // fields (defaults filled in, every key "unknown"), which is nothing the operator wrote
    const listForMapping =
      Array.isArray(error.value) &&
      Object.entries(error.constraints ?? {}).some(
        ([kind, message]) => kind === 'isObject' || message.startsWith('must be a mapping'),
      );
    const entries = listForMapping ? (error.value as unknown[]).length : 0;
    const got =
      entries > 0
        ? `a list of ${entries} entr${entries === 1 ? 'y' : 'ies'}`
        : describeValue(error.value);
    // One line per distinct reason: several decorators of a field may share a message.
    const reasons = new Map<string, ConfigProblem>();
    const add = (problem: ConfigProblem): void => {
      reasons.set(renderProblem(problem), problem);
    };
    for (const [kind, message] of Object.entries(error.constraints ?? {})) {
      if (kind === 'whitelistValidation') {
        add(invalid(path, 'unknown key (check its spelling and place in the mcp: tree)'));
      } else if (kind === 'nestedValidation') {
        add(invalid(path, 'must be a mapping', got));
      } else {
        add(invalid(path, message, got));
      }
    }
    // Not an integer at all: the range checks add nothing.
    if (error.constraints?.isInt !== undefined) {
      reasons.clear();
      add(invalid(path, error.constraints.isInt, got));
    }
    // A list where a list belongs is the only reason worth saying for a non-list.
    if (error.constraints?.isArray !== undefined) {
      reasons.clear();
      add(invalid(path, error.constraints.isArray, got));
    }
    // "must be a mapping" once: the mapping check and the nested check say the same.
    const mapping = [...reasons].filter(([, r]) => r.message.startsWith('must be a mapping'));
    if (mapping.length > 1) {
      for (const [key, reason] of mapping)
        if (reason.message === 'must be a mapping') reasons.delete(key);
    }
    // A missing value fails every check of its field; "is required" says it once.
    if (
      error.value === undefined &&
      [...reasons.values()].some((r) => r.message.includes('is required'))
    ) {
      for (const [key, reason] of [...reasons])
        if (!reason.message.includes('is required')) reasons.delete(key);
    }
    lines.push(...reasons.values());
    if (!listForMapping) lines.push(...flattenValidationErrors(error.children ?? [], path));
  }
  return lines;
}

/** `file:./x.json` or `./x.json` → an absolute path under cwd. */
export function resolveFilePath(value: string, cwd: string): string {
  const path = value.startsWith('file:') ? value.slice('file:'.length) : value;
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/**
 * A source's authorization with its secret read from the environment; what is missing or
 * unusable is added to `problems` under `at` (`mcp.bundles[i]`, or '' for a registration body).
 */
export function resolveAuthorization(
  bundle: Pick<BundleConfig, 'authorization'>,
  env: Env,
  at: string,
  problems: ConfigProblem[],
): ResolvedAuthorization {
  const valueEnv = fieldPath(at, 'authorization.valueEnv');
  // A malformed authorization section was reported by validation; resolve it to none.
  const auth =
    typeof bundle.authorization === 'object' && bundle.authorization !== null
      ? bundle.authorization
      : { mode: 'none' as const, valueEnv: undefined };
  switch (auth.mode) {
    case 'none':
      return { mode: 'none' };
    case 'passthrough':
      return { mode: 'passthrough' };
    case 'static': {
      const name = auth.valueEnv ?? '';
      const value = name === '' ? undefined : env[name];
      if (value !== undefined && !/^[\x20-\x7e\t]*$/.test(value)) {
        // The value itself is a secret: name the variable, never the value.
        problems.push(invalid(valueEnv, `${name} holds characters an HTTP header cannot carry`));
      }
      if (name !== '' && (value === undefined || value === '')) {
        problems.push(invalid(valueEnv, `environment variable ${name} is not set or empty`));
      }
      return { mode: 'static', value: value ?? '' };
    }
    case 'tokenExchange':
      return resolveTokenExchange(auth, env, fieldPath(at, 'authorization'), problems);
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * mode tokenExchange (docs/operations.md §14 "Credentials towards sources"): every field it needs,
 * each missing one named.
 */
function resolveTokenExchange(
  auth: Partial<BundleAuthorizationConfig>,
  env: Env,
  at: string,
  problems: ConfigProblem[],
): ResolvedAuthorization {
  const need = 'is required with mode tokenExchange';
  if (auth.tokenEndpoint === undefined) problems.push(invalid(`${at}.tokenEndpoint`, need));
  else if (!isHttpUrl(auth.tokenEndpoint))
    problems.push(invalid(`${at}.tokenEndpoint`, 'must be an http(s) URL'));
  if (auth.clientId === undefined) problems.push(invalid(`${at}.clientId`, need));
  if (auth.audience === undefined) problems.push(invalid(`${at}.audience`, need));
  const name = auth.clientSecretEnv;
  const secret = name === undefined ? undefined : env[name];
  if (name === undefined) problems.push(invalid(`${at}.clientSecretEnv`, need));
  else if (secret === undefined || secret === '')
    problems.push(
      invalid(`${at}.clientSecretEnv`, `environment variable ${name} is not set or empty`),
    );
  return {
    mode: 'tokenExchange',
    tokenEndpoint: auth.tokenEndpoint ?? '',
    clientId: auth.clientId ?? '',
    clientSecret: secret ?? '',
    audience: auth.audience ?? '',
    scope: auth.scope,
  };
}

/**
 * Reads and validates the whole configuration once: config files (profile or MCP_CONFIG_FILE),
 * then PORT, MANAGEMENT_PORT, HOST, REDIS_URL, MCP_SESSION_KEYS and the env variables named by
 * bundles. Throws ConfigValidationError listing every problem; returns a frozen-by-convention
 * GatewayConfig otherwise.
 */
export function loadGatewayConfig(options: LoadConfigOptions): GatewayConfig {
  try {
    return loadOrThrow(options);
  } catch (err) {
    if (err instanceof ConfigValidationError) throw err;
    // A shape no rule foresaw still ends in the one-message report, never a stack trace.
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new ConfigValidationError(
      [invalid('', `the configuration could not be read (${reason})`)],
      'unexpected shape',
    );
  }
}

function loadOrThrow(options: LoadConfigOptions): GatewayConfig {
  const { env, cwd } = options;
  const profile =
    env.APP_PROFILE !== undefined && env.APP_PROFILE !== '' ? env.APP_PROFILE : 'local';
  const {
    raw: written,
    sources,
    problems: sourceProblems,
  } = readConfigSources(profile, env.MCP_CONFIG_FILE, cwd);
  const problems: ConfigProblem[] = [...sourceProblems];
  const unsetVariables: ConfigProblem[] = [];
  const raw = expandEnvPlaceholders(written, env, unsetVariables);
  problems.push(...unsetVariables);
  const context = `profile ${profile}; ${sources.length > 0 ? sources.join(', ') : 'no config file read'}`;
  // a field whose variable is unset keeps its placeholder text, which its own checks refuse
  // too: it is named once, for the variable
  const unsetPaths = new Set(unsetVariables.map((problem) => problem.path));
  const failure = (): ConfigValidationError =>
    new ConfigValidationError(
      problems.filter(
        (problem) => !unsetPaths.has(problem.path) || unsetVariables.includes(problem),
      ),
      context,
    );
  if (sourceProblems.length > 0) {
    // An unreadable or missing file explains every missing field: report the file, and the
    // environment, not the consequences.
    readEnvSettings(env, profile, problems);
    throw failure();
  }

  const root = plainToInstance(ConfigFileRoot, raw, { exposeDefaultValues: true });
  problems.push(
    ...flattenValidationErrors(
      validateSync(root, {
        whitelist: true,
        forbidNonWhitelisted: true,
        forbidUnknownValues: false,
      }),
      '',
    ),
  );
  const envSettings = readEnvSettings(env, profile, problems);
  const rawRedis = (root.mcp as Partial<McpConfig> | undefined)?.redis;
  const redisServer = redisServerFrom(
    typeof rawRedis === 'object' && rawRedis !== null ? rawRedis : undefined,
    env,
    problems,
  );
  const mcp = root.mcp;
  if (mcp === undefined || mcp === null || typeof mcp !== 'object' || Array.isArray(mcp)) {
    throw failure();
  }
  problems.push(...crossFieldProblems(mcp, profile));
  problems.push(...httpAccessProblems(mcp.http));
  problems.push(...managementProblems(mcp.management));
  problems.push(...upstreamProblems(mcp), ...prefixProblems(mcp));
  if (mcp.rateLimits?.store === 'redis' && redisServer === undefined)
    problems.push(
      invalid(
        'mcp.rateLimits.store',
        'redis needs Redis (REDIS_URL, mcp.redis.sentinels or mcp.redis.clusterNodes; buckets are shared through it)',
      ),
    );
  // the resource server and the access rules (docs/operations.md §13)
  const auth = authProblems(mcp.auth, env);
  problems.push(...auth.problems, ...accessProblems(mcp.access, mcp.auth));
  const adminToken = adminTokenFrom(env, problems);
  if (typeof mcp.admin === 'object' && mcp.admin !== null)
    problems.push(...adminPatternProblems(mcp.admin));

  // Authorization values come from env variables the bundles name: resolved (and checked) now.
  const rawBundles = Array.isArray(mcp.bundles) ? mcp.bundles : [];
  const authorizations = rawBundles.map((b, i) =>
    typeof b === 'object' && b !== null
      ? resolveAuthorization(b, env, `mcp.bundles[${i}]`, problems)
      : ({ mode: 'none' } as const),
  );

  const rawUpstreams = Array.isArray(mcp.upstreams) ? mcp.upstreams : [];
  const upstreamAuthorizations = rawUpstreams.map((u, i) =>
    typeof u === 'object' && u !== null
      ? resolveAuthorization(u, env, `mcp.upstreams[${i}]`, problems)
      : ({ mode: 'none' } as const),
  );

  if (problems.length > 0) throw failure();

  const upstreams: UpstreamDefinition[] = rawUpstreams.map((u, i) =>
    upstreamDefinitionFrom(u, upstreamAuthorizations[i] ?? { mode: 'none' }, mcp),
  );

  const configured: BundleDefinition[] = rawBundles.map((b, i) => ({
    id: b.id,
    manifestUrl: b.manifestUrl,
    baseEndpoint: b.baseEndpoint.replace(/\/+$/, ''),
    namePrefix: b.namePrefix,
    enabled: b.enabled,
    fallbackManifestFile:
      b.fallbackManifestFile === undefined
        ? undefined
        : resolveFilePath(b.fallbackManifestFile, cwd),
    authorization: authorizations[i] ?? { mode: 'none' },
    // 5xx bodies often carry stack traces and internal addresses: hidden outside local.
    serverErrorBody: b.serverErrorBody ?? (profile === 'local' ? 'show' : 'hide'),
    validateArguments: b.validateArguments,
    pinned: b.pinned,
  }));

  // contract §3: remote manifests and the legacy local JSON fixture are exclusive.
  const bundles: BundleDefinition[] =
    mcp.discovery.enabled || mcp.localFixture === undefined
      ? configured
      : [
          {
            id: LOCAL_FIXTURE_BUNDLE_ID,
            manifestUrl: `file:${resolveFilePath(mcp.localFixture.file, cwd)}`,
            manifestFile: resolveFilePath(mcp.localFixture.file, cwd),
            baseEndpoint: mcp.localFixture.baseEndpoint.replace(/\/+$/, ''),
            namePrefix: '',
            enabled: true,
            authorization: { mode: 'none' },
            serverErrorBody: 'show',
          },
        ];

  return {
    profile,
    sources,
    mcp,
    bundles,
    upstreams,
    server: {
      host: envSettings.host,
      port: envSettings.port,
      managementPort: envSettings.managementPort,
      managementHost: envSettings.managementHost,
      mcpListener: envSettings.mcpListener,
      heapGrowingPercent: envSettings.heapGrowingPercent,
      maxMcpConnections: mcp.http.maxConnections ?? defaultMaxConnections(openFileLimit()),
    },
    redisServer,
    authSecrets: { introspectionClientSecret: auth.introspectionClientSecret },
    sessionKeys: envSettings.sessionKeys,
    sessionKeysEphemeral: envSettings.sessionKeysEphemeral,
    logLevel: envSettings.logLevel,
    version: options.version,
    admin: {
      token: adminToken,
      weakToken:
        adminToken !== undefined &&
        profile !== 'local' &&
        adminToken.length < WEAK_ADMIN_TOKEN_LENGTH,
      allowLoopback: mcp.admin.allowLoopback ?? profile === 'local',
      urlPatterns: mcp.admin.allowedUpstreamUrls.flatMap((t) => {
        const p = parseUrlPattern(t);
        return typeof p === 'string' ? [] : [p];
      }),
      allowedRanges: mcp.admin.allowedAddressRanges.flatMap((t) => {
        const r = parseAddressRange(t);
        return typeof r === 'string' ? [] : [r];
      }),
      scope: mcp.admin.scope,
      secretEnv: (name) => env[name],
      secretEnvAllowed: (name) => secretEnvAllowed(name, mcp.admin.allowedSecretEnv),
    },
  };
}

/**
 * One validated `mcp.upstreams[]` entry (or a registered upstream, docs/operations.md §15) as the
 * gateway uses it: default prefix applied, timeouts in ms, header names lower-cased.
 */
export function upstreamDefinitionFrom(
  u: UpstreamConfig,
  authorization: ResolvedAuthorization,
  mcp: Pick<McpConfig, 'discovery'>,
): UpstreamDefinition {
  return {
    id: u.id,
    url: u.url,
    namePrefix: upstreamNamePrefix(u),
    enabled: u.enabled,
    protocol: u.protocol,
    lists: u.lists,
    connectMillis: u.timeouts.connectMillis,
    listMillis: u.timeouts.listMillis,
    callMillis: u.timeouts.callMillis ?? mcp.discovery.maxToolTimeoutMillis,
    forwardHeaders: u.forwardHeaders.map((h) => h.toLowerCase()),
    authorization,
    validateArguments: u.validateArguments,
    pinned: u.pinned,
    ...(u.cacheTtlMillis === undefined ? {} : { cacheTtlMillis: u.cacheTtlMillis }),
    ...(u.cacheScope === undefined ? {} : { cacheScope: u.cacheScope }),
  };
}

/** The gateway's own secrets: never named by a registration, whatever the allow-list says. */
const RESERVED_SECRET_ENV = new Set(['MCP_ADMIN_TOKEN', 'MCP_SESSION_KEYS', 'REDIS_URL']);

/** `name` is allowed by `patterns` (exact names, or prefixes ending in `*`) and not reserved. */
export function secretEnvAllowed(name: string, patterns: readonly string[]): boolean {
  if (RESERVED_SECRET_ENV.has(name)) return false;
  return patterns.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));
}

/**
 * Shortest MCP_ADMIN_TOKEN taken without a warning outside the `local` profile: a shorter one
 * is accepted (it may be what an operator has) and named at boot as guessable.
 */
export const WEAK_ADMIN_TOKEN_LENGTH = 32;

/**
 * MCP_ADMIN_TOKEN (docs/operations.md §15 "Access"): unset or empty is "no static admin token".
 */
function adminTokenFrom(env: Env, problems: ConfigProblem[]): string | undefined {
  const token = env.MCP_ADMIN_TOKEN;
  if (token === undefined || token === '') return undefined;
  // Sent as "Authorization: Bearer <token>": RFC 6750 b64token characters only. Never echo it.
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    problems.push(
      invalid(
        'MCP_ADMIN_TOKEN',
        'must be a bearer token of letters, digits and -._~+/ (optionally ending in =)',
      ),
    );
    return undefined;
  }
  return token;
}
