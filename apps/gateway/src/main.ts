import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigValidationError, loadGatewayConfig, type GatewayConfig } from '@app/config';
import { installRawBodyParser, MCP_MAX_BODY_BYTES, McpExceptionFilter } from '@app/mcp';
import { createRootLogger, GatewayMetrics, PinoNestLogger } from '@app/observability';
import { RegistryService } from '@app/registry';
import packageJson from '../../../package.json';
import { AppModule } from './app.module';
import { drainAndClose } from './graceful-shutdown';
import { ManagementModule } from './management/management.module';
import { RegistryHealthIndicator } from './management/registry-health.indicator';

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
  app: NestFastifyApplication,
  port: number,
  host: string,
  name: string,
): Promise<void> {
  try {
    await app.listen(port, host);
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

function boundPort(app: NestFastifyApplication): number {
  const address = app.getHttpServer().address();
  return typeof address === 'object' && address !== null ? address.port : -1;
}

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit();
  // JSON lines through pino for Nest's own lines and ours alike.
  const nestLogger = new PinoNestLogger(createRootLogger(config.logLevel));
  Logger.overrideLogger(nestLogger);
  const logger = new Logger('Gateway');

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    // requestTimeout bounds receiving a request (a client dripping its body), not the answer.
    new FastifyAdapter({
      bodyLimit: MCP_MAX_BODY_BYTES,
      keepAliveTimeout: 65_000,
      requestTimeout: 30_000,
    }),
    { bodyParser: false, logger: nestLogger },
  );
  installRawBodyParser(app.getHttpAdapter().getInstance());
  app.useGlobalFilters(new McpExceptionFilter());

  const management = await NestFactory.create<NestFastifyApplication>(
    ManagementModule.forRoot({
      registry: app.get(RegistryService),
      metrics: app.get(GatewayMetrics),
    }),
    new FastifyAdapter(),
    { logger: nestLogger },
  );

  await listenOrExit(app, config.server.port, config.server.host, 'PORT');
  await listenOrExit(
    management,
    config.server.managementPort,
    config.server.host,
    'MANAGEMENT_PORT',
  );
  // The bound ports (PORT=0 picks a free one); tests and operators read them from this line.
  logger.log(
    `mcp-gateway ${config.version} (${config.mcp.identity}, profile ${config.profile}) listening: ` +
      `mcp=${boundPort(app)} management=${boundPort(management)} host=${config.server.host}`,
  );

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.log(
      `${signal} received: draining (grace period ${config.mcp.shutdown.gracePeriodSeconds} s)`,
    );
    drainAndClose({
      app,
      management,
      markDraining: () => management.get(RegistryHealthIndicator).markDraining(),
      gracePeriodMs: config.mcp.shutdown.gracePeriodSeconds * 1000,
      logger,
    })
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
}

void bootstrap();
