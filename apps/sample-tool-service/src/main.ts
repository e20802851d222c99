import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SampleToolServiceModule } from './sample-tool-service.module';

/** The sample Tool Service used by `npm start`, demos and tests. PORT (default 8081), HOST (default 127.0.0.1). */
async function bootstrap(): Promise<void> {
  // started by scripts/start-local.mjs with an IPC channel: its end (the starter died) stops this
  // too — watched from the first line, so a starter gone during the boot leaves nothing running
  let parentGone: () => void = () => process.exit(0);
  if (process.channel !== undefined) process.once('disconnect', () => parentGone());
  const app = await NestFactory.create<NestFastifyApplication>(
    SampleToolServiceModule,
    new FastifyAdapter(),
    { logger: new ConsoleLogger({ json: true }) },
  );
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 8081);
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen(port, host);
  const address = app.getHttpServer().address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  new Logger('SampleToolService').log(
    `Sample Tool Service on http://${host}:${bound} (GET /tool-manifest, POST /mcp/{toolName})`,
  );
  parentGone = () => void app.close().finally(() => process.exit(0));
}

bootstrap().catch((err: unknown) => {
  const code = (err as NodeJS.ErrnoException).code;
  const reason =
    code === 'EADDRINUSE'
      ? `port ${process.env.PORT ?? 8081} on ${process.env.HOST ?? '127.0.0.1'} is in use (set PORT to another port)`
      : err instanceof Error
        ? err.message
        : String(err);
  process.stderr.write(`Sample Tool Service did not start: ${reason}\n`);
  process.exit(1);
});
