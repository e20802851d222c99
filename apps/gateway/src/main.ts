import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ConfigValidationError,
  describeRedisServer,
  loadGatewayConfig,
  type GatewayConfig,
} from '@app/config';
import {
  configureMcpFastify,
  McpHttpServer,
  mcpFastifyAdapter,
  SessionTokenService,
  GatewayTasks,
  VirtualServers,
  VirtualServerRegistrations,
  trackConnections,
} from '@app/mcp';
import {
  createRootLogger,
  flushLogs,
  GatewayMetrics,
  PinoNestLogger,
  startTracing,
} from '@app/observability';
import { Clock, PinnedTools, RegistryService } from '@app/registry';
import packageJson from '../../../package.json';
import { AdminAuditLog } from './admin/admin-audit-log';
import { AdminAuthenticator } from './admin/admin-authenticator';
import { UpstreamRegistrations } from './admin/upstream-registrations.service';
import { AppModule } from './app.module';
import { drainAndClose } from './graceful-shutdown';
import { McpAddress } from './management/console/mcp-address';
import { managementAdapter } from './management/management-adapter';
import { ManagementHostPolicy } from './management/management-host-policy';
import { ManagementModule } from './management/management.module';
import { RegistryHealthIndicator } from './management/registry-health.indicator';

/** What `--help` prints: the gateway takes its settings from the environment and its config file. */
const USAGE = `mcp-gateway ${packageJson.version}: one MCP endpoint (POST /mcp) for Tool Service bundles and upstream MCP servers.

Usage: node dist/apps/gateway/main.js            (npm run start:gateway)
       node dist/apps/gateway/main.js --help | --version

It takes no other arguments: settings come from the environment and the YAML config file.
  APP_PROFILE              the profile (default local): config/application-<profile>.yaml
  MCP_CONFIG_FILE          one config file instead of config/application*.yaml
  PORT                     the /mcp listener (default 8080; 0 picks a free port)
  MANAGEMENT_PORT          health, status, metrics, /admin, /console (default 9090)
  HOST                     where both listen (default 0.0.0.0)
  MANAGEMENT_HOST          where the management port listens (default HOST)
  REDIS_URL                redis:// or rediss://: last-good copies, registrations, sessions'
                           state, tasks, shared by every replica (default: memory only;
                           Sentinel or Cluster: mcp.redis.sentinels or clusterNodes)
  REDIS_USERNAME, REDIS_PASSWORD
                           the Redis data nodes' credentials
  REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD
                           the sentinels' credentials
  REDIS_TLS                true: TLS to the sentinels and data nodes (default false)
  MCP_SESSION_KEYS         kid:base64key,...: seals session ids, requestState and task ids so
                           every replica opens them (local: one random key)
  LOG_LEVEL                fatal, error, warn, info, debug, trace, silent (default info)
  MCP_HTTP_SERVER          fastify (default) or node: the /mcp listener
  NODE_OPTIONS, MALLOC_TRIM_THRESHOLD_
                           memory settings (the chart and npm start set both)
  MCP_HEAP_GROWING_PERCENT 1..300: V8's old-generation growing factor, 1 + n/100 (the chart
                           and npm start set 100; unset: V8's own, up to 4x)
  MCP_ADMIN_TOKEN          bearer token of /admin writes and the console (default: read-only)
  OTEL_EXPORTER_OTLP_HEADERS
                           headers of the OTLP/HTTP trace exports (key=value,...)
  the valueEnv of a bundle's authorization
                           its static Authorization header
Every setting, its default and what it accepts: docs/operations.md (section 1).
`;

/**
 * Arguments: `--help` and `--version` answer and exit; anything else stops with a plain line,
 * rather than booting a gateway that ignores it.
 */
function handleArgumentsOrExit(args: readonly string[]): void {
  if (args.length === 0) return;
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
    process.stdout.write(`${packageJson.version}\n`);
    process.exit(0);
  }
  process.stderr.write(
    `Unknown argument: ${args.join(' ').slice(0, 200)}\nThe gateway takes its settings from the environment and its config file; see --help.\n`,
  );
  process.exit(2);
}

function loadConfigOrExit(): GatewayConfig {
  try {
    return loadGatewayConfig({
      env: process.env,
      cwd: process.cwd(),
      version: packageJson.version,
    });
  } catch (err) {
    if (err instanceof ConfigValidationError) {
      process.stderr.write(`${err.message}\nThe gateway did not start.\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** A port that cannot be bound stops the boot with one plain line, like a bad config. */
async function listenOrExit(
  listen: () => Promise<number>,
  port: number,
  host: string,
  name: string,
): Promise<number> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const reason =
      code === 'EADDRINUSE'
        ? 'is already in use'
        : code === 'EACCES'
          ? 'is not allowed'
          : 'cannot be bound';
    process.stderr.write(
      `${name}=${port} on ${host} ${reason} (${code}). The gateway did not start.\n`,
    );
    process.exit(1);
  }
}

interface McpListener {
  /** The Nest container the modules live in (closed on shutdown). */
  readonly app: INestApplicationContext;
  listen(port: number, host: string): Promise<number>;
  drain(graceMs: number): Promise<boolean>;
}

async function createMcpListener(
  config: GatewayConfig,
  nestLogger: PinoNestLogger,
): Promise<McpListener> {
  // MCP_HTTP_SERVER (config.server.mcpListener): the default fastify McpController, or node:http
  if (config.server.mcpListener === 'node') {
    const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
      logger: nestLogger,
    });
    const server = app.get(McpHttpServer);
    return {
      app,
      listen: (port, host) => server.listen(port, host, config.server.maxMcpConnections),
      drain: (graceMs) => server.drain(graceMs),
    };
  }
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    mcpFastifyAdapter(),
    { logger: nestLogger, bodyParser: false },
  );
  const drain = configureMcpFastify(app);
  return {
    app,
    listen: async (port, host) => {
      // http.maxConnections (docs/operations.md §1): past this, node:http closes new connections as
      // they arrive
      app.getHttpServer().maxConnections = config.server.maxMcpConnections;
      await app.listen(port, host);
      return boundPort(app);
    },
    drain,
  };
}

function boundPort(app: NestFastifyApplication): number {
  const address = app.getHttpServer().address();
  return typeof address === 'object' && address !== null ? address.port : -1;
}

/**
 * Composition root: the gateway's modules in one Nest application context; agents reach it
 * through McpHttpServer on PORT (plain node:http, the lean path), operators through a Nest
 * application on MANAGEMENT_PORT that shares the context's registry and metrics.
 */
async function bootstrap(): Promise<void> {
  handleArgumentsOrExit(process.argv.slice(2));
  // started by a supervisor with an IPC channel (scripts/start-local.mjs): when the channel
  // closes the supervisor is gone, even killed outright, and nobody would stop this process.
  // Watched from the first line: a supervisor gone during the boot ends it at once (nothing is
  // served yet); once listening, the drain runs (`stop` below).
  let parentGone: () => void = () => process.exit(0);
  if (process.channel !== undefined) process.once('disconnect', () => parentGone());
  const config = loadConfigOrExit();
  // Node does not take V8's heap growing flag in NODE_OPTIONS: set here, before the modules are
  // built and the calls' garbage starts to flow (docs/operations.md §1; docs/benchmarks.md "The
  // soak: a fixed heap growing factor")
  if (config.server.heapGrowingPercent !== undefined)
    setFlagsFromString(`--heap-growing-percent=${config.server.heapGrowingPercent}`);
  // JSON lines through pino for Nest's own lines and ours alike.
  const nestLogger = new PinoNestLogger(createRootLogger(config.logLevel));
  Logger.overrideLogger(nestLogger);
  const logger = new Logger('Gateway');
  // A promise rejected with nobody awaiting it must not end every call and stream of this
  // replica: a library can leave one (ioredis re-sends SUBSCRIBE and SELECT after a reconnect
  // without a handler, and rejects them when Redis goes away before answering; the gateway's
  // subscribers subscribe themselves for that, libs/redis/src/redis-uses.ts). Logged as the
  // fault it is, with its stack; the process goes on (docs/operations.md §1).
  process.on('unhandledRejection', (reason: unknown) => {
    logger.error(
      `Unhandled promise rejection, ignored (please report it): ${reason instanceof Error ? (reason.stack ?? `${reason.name}: ${reason.message}`) : typeof reason}`,
    );
  });

  // before the modules are built: their clients (HTTP, Redis) start under the provider
  const stopTracing =
    config.mcp.tracing.endpoint === undefined
      ? undefined
      : await startTracing(
          {
            endpoint: config.mcp.tracing.endpoint,
            samplingRatio: config.mcp.tracing.samplingRatio,
            serviceName: config.mcp.tracing.serviceName,
            serviceVersion: config.version,
            exportTimeoutMillis: config.mcp.tracing.exportTimeoutMillis,
          },
          (message) => logger.warn(message),
        );
  if (stopTracing !== undefined)
    logger.log(
      `Traces: OTLP/HTTP to ${withoutCredentials(config.mcp.tracing.endpoint ?? '')}, sampling ${config.mcp.tracing.samplingRatio}`,
    );
  // settings of traces that none are sent with: said, not silently ignored
  else if (
    config.mcp.tracing.samplingRatio !== 1 ||
    config.mcp.tracing.serviceName !== 'mcp-gateway' ||
    config.mcp.tracing.exportTimeoutMillis !== 10_000
  )
    logger.warn(
      'mcp.tracing is set without mcp.tracing.endpoint: traces are off (the gateway sends them only to the endpoint its configuration names; OTEL_EXPORTER_OTLP_ENDPOINT is not read)',
    );
  // where the shared state lives (docs/operations.md §5), without a credential
  if (config.redisServer !== undefined)
    logger.log(`Redis: ${describeRedisServer(config.redisServer)}`);
  const mcp = await createMcpListener(config, nestLogger);
  const { app } = mcp;
  const mcpAddress = new McpAddress();
  const management = await NestFactory.create<NestFastifyApplication>(
    ManagementModule.forRoot({
      registry: app.get(RegistryService),
      pinned: app.get(PinnedTools),
      clock: app.get(Clock),
      servers: app.get(VirtualServers),
      serverRegistrations: app.get(VirtualServerRegistrations),
      metrics: app.get(GatewayMetrics),
      sessions: app.get(SessionTokenService),
      config,
      mcpAddress,
      admin: {
        registrations: app.get(UpstreamRegistrations),
        authenticator: app.get(AdminAuthenticator),
        audit: app.get(AdminAuditLog),
      },
    }),
    managementAdapter(
      new ManagementHostPolicy(config.mcp.management.allowedHosts),
      app.get(AdminAuditLog),
    ),
    { logger: nestLogger },
  );
  // the drain closes its idle and never-used connections (graceful-shutdown.ts)
  trackConnections(management.getHttpServer());

  const { port, managementPort, host, managementHost } = config.server;
  const mcpPort = await listenOrExit(() => mcp.listen(port, host), port, host, 'PORT');
  mcpAddress.port = mcpPort;
  await listenOrExit(
    async () => {
      await management.listen(managementPort, managementHost);
      return boundPort(management);
    },
    managementPort,
    managementHost,
    'MANAGEMENT_PORT',
  );
  // A config file of one's own does not choose the profile: without APP_PROFILE the local
  // profile's development defaults apply to it too (README "Configuration")
  if ((process.env.APP_PROFILE ?? '') === '' && (process.env.MCP_CONFIG_FILE ?? '') !== '')
    logger.warn(
      'APP_PROFILE is not set: the local profile applies to MCP_CONFIG_FILE too, with its ' +
        'development defaults (5xx bodies of Tool Services shown to agents, a random session key, ' +
        'loopback admin registrations); set APP_PROFILE (e.g. ocp) for a deployment',
    );
  // The bound ports (PORT=0 picks a free one); tests and operators read them from this line.
  logger.log(
    `mcp-gateway ${config.version} (${config.mcp.identity}, profile ${config.profile}) listening: ` +
      `mcp=${mcpPort} management=${boundPort(management)} host=${host} ` +
      (managementHost === host ? '' : `managementHost=${managementHost} `) +
      `(/mcp: ${config.server.mcpListener}, at most ${config.server.maxMcpConnections} connections)`,
  );
  // at once, not with the next batch of log lines: start-up scripts and tests wait for it
  flushLogs();

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.log(
      `${signal} received: draining (grace period ${config.mcp.shutdown.gracePeriodSeconds} s)`,
    );
    drainAndClose({
      app,
      mcp,
      management,
      tasks: app.get(GatewayTasks, { strict: false }),
      markDraining: () => management.get(RegistryHealthIndicator).markDraining(),
      gracePeriodMs: config.mcp.shutdown.gracePeriodSeconds * 1000,
      logger,
    })
      // the spans of the drain go out before the process does
      .then(() => stopTracing?.())
      .then(() => {
        logger.log('Stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error(`Shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  parentGone = () => stop('parent exited');
}

/** A URL as a log line may show it: no user, no password, no query. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

void bootstrap();
