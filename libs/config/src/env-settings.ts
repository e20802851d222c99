import { invalid, type ConfigProblem } from './config-problem';
import { randomBytes } from 'node:crypto';
import {
  LOG_LEVELS,
  MCP_LISTENER_KINDS,
  type GatewayConfig,
  type LogLevel,
  type McpListenerKind,
  type SessionKey,
} from './gateway-config';

type Env = Readonly<Record<string, string | undefined>>;

/** The listener, Redis, session and log settings read from the environment (DESIGN "Interfaces"). */
export type EnvSettings = Omit<GatewayConfig['server'], 'maxMcpConnections'> &
  Pick<GatewayConfig, 'sessionKeys' | 'sessionKeysEphemeral' | 'logLevel'>;

function portFrom(env: Env, name: string, fallback: number, problems: ConfigProblem[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(n) || n < 0 || n > 65535) {
    problems.push(invalid(`${name}`, `must be a TCP port 0..65535 (got "${raw}")`));
    return fallback;
  }
  return n;
}

/** The bounds of MCP_HEAP_GROWING_PERCENT: V8 grows the old generation by 1.01× to 4× of what lives. */
export const HEAP_GROWING_PERCENT_RANGE = { min: 1, max: 300 } as const;

/**
 * MCP_HEAP_GROWING_PERCENT: how far V8 lets the old generation grow past what survived its last
 * full collection before it collects again (a factor of 1 + n/100) instead of its own factor,
 * which reaches 4× under a steady allocation rate and leaves RSS at the high-water mark of those
 * peaks (docs/benchmarks.md "The soak: a fixed heap growing factor"). Node does not take the
 * flag in NODE_OPTIONS, so the gateway sets it itself at boot. Unset: V8's own factor.
 */
function heapGrowingPercentFrom(env: Env, problems: ConfigProblem[]): number | undefined {
  const raw = env.MCP_HEAP_GROWING_PERCENT;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  const { min, max } = HEAP_GROWING_PERCENT_RANGE;
  if (!/^\d+$/.test(raw) || n < min || n > max) {
    problems.push(
      invalid('MCP_HEAP_GROWING_PERCENT', `must be an integer ${min}..${max} (got "${raw}")`),
    );
    return undefined;
  }
  return n;
}

/**
 * MCP_SESSION_KEYS = "kid:base64key[,kid:base64key…]", each key 32 bytes; the first seals new
 * session ids, all of them open existing ones (rotation). Unset in the local profile: one
 * random key, so sessions do not survive a restart. Unset elsewhere: no key at all, and the
 * gateway runs in stateless legacy mode (no Mcp-Session-Id issued; SessionTokenService warns
 * once), because a random key per replica would seal ids the other replicas cannot open
 * (DESIGN "No sticky sessions") and a first install must not need a hand-made Secret.
 */
function sessionKeysFrom(
  env: Env,
  profile: string,
  problems: ConfigProblem[],
): { keys: SessionKey[]; ephemeral: boolean } {
  const raw = env.MCP_SESSION_KEYS;
  if (raw === undefined || raw.trim() === '') {
    if (profile !== 'local') return { keys: [], ephemeral: false };
    return { keys: [{ kid: 'local', key: randomBytes(32) }], ephemeral: true };
  }
  const keys: SessionKey[] = [];
  raw.split(',').forEach((entry, i) => {
    const sep = entry.indexOf(':');
    const kid = entry.slice(0, sep).trim();
    const material = entry.slice(sep + 1).trim();
    if (sep <= 0 || !/^[A-Za-z0-9_-]{1,16}$/.test(kid)) {
      problems.push(
        invalid(
          `MCP_SESSION_KEYS[${i}]`,
          'must be "kid:base64key" with a kid of [A-Za-z0-9_-]{1,16}',
        ),
      );
      return;
    }
    const key = Buffer.from(material, 'base64');
    if (key.length !== 32) {
      problems.push(
        invalid(
          `MCP_SESSION_KEYS[${i}] (kid ${kid})`,
          `the key must decode from base64 to 32 bytes (got ${key.length})`,
        ),
      );
      return;
    }
    if (keys.some((k) => k.kid === kid)) {
      problems.push(invalid(`MCP_SESSION_KEYS[${i}]`, `kid "${kid}" appears twice`));
      return;
    }
    keys.push({ kid, key });
  });
  return { keys, ephemeral: false };
}

export function readEnvSettings(env: Env, profile: string, problems: ConfigProblem[]): EnvSettings {
  const port = portFrom(env, 'PORT', 8080, problems);
  const managementPort = portFrom(env, 'MANAGEMENT_PORT', 9090, problems);
  if (port === managementPort && port !== 0) {
    problems.push(
      invalid(
        'MANAGEMENT_PORT',
        `must differ from PORT (both ${port}); /actuator must not share the /mcp listener`,
      ),
    );
  }
  const host = env.HOST !== undefined && env.HOST !== '' ? env.HOST : '0.0.0.0';
  // The management port may listen elsewhere, e.g. only on the pod's loopback or a second network.
  const managementHost =
    env.MANAGEMENT_HOST !== undefined && env.MANAGEMENT_HOST !== '' ? env.MANAGEMENT_HOST : host;
  const { keys, ephemeral } = sessionKeysFrom(env, profile, problems);
  let logLevel: LogLevel = 'info';
  const rawLevel = env.LOG_LEVEL;
  if (rawLevel !== undefined && rawLevel !== '') {
    if ((LOG_LEVELS as readonly string[]).includes(rawLevel)) logLevel = rawLevel as LogLevel;
    else
      problems.push(
        invalid('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${rawLevel}")`),
      );
  }
  let mcpListener: McpListenerKind = 'fastify';
  const rawListener = env.MCP_HTTP_SERVER;
  if (rawListener !== undefined && rawListener !== '') {
    if ((MCP_LISTENER_KINDS as readonly string[]).includes(rawListener))
      mcpListener = rawListener as McpListenerKind;
    else
      problems.push(
        invalid(
          'MCP_HTTP_SERVER',
          `must be one of ${MCP_LISTENER_KINDS.join(', ')} (got "${rawListener}")`,
        ),
      );
  }
  return {
    host,
    port,
    managementPort,
    managementHost,
    mcpListener,
    heapGrowingPercent: heapGrowingPercentFrom(env, problems),
    sessionKeys: keys,
    sessionKeysEphemeral: ephemeral,
    logLevel,
  };
}
