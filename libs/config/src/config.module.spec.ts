import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { GatewayConfigModule } from './config.module';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import { McpConfig } from './mcp-config.model';

function config(): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw-di-test';
  return {
    profile: 'staging',
    sources: ['/etc/gw.yaml'],
    mcp,
    bundles: [],
    upstreams: [],
    server: {
      host: '127.0.0.1',
      port: 0,
      managementPort: 0,
      managementHost: '127.0.0.1',
      mcpListener: 'fastify',
      maxMcpConnections: 100,
    },
    redisServer: undefined,
    sessionKeys: [{ kid: 'k1', key: Buffer.alloc(32, 7) }],
    sessionKeysEphemeral: false,
    logLevel: 'silent',
    version: '1.2.3',
  };
}

/** A consumer in another module, as the feature modules are. */
@Injectable()
class Consumer {
  constructor(
    readonly configService: ConfigService<GatewayConfig, true>,
    @Inject(GATEWAY_CONFIG) readonly whole: GatewayConfig,
  ) {}
}

@Module({ providers: [Consumer] })
class FeatureModule {}

describe('GatewayConfigModule: the validated config in DI through @nestjs/config (docs/architecture.md "Which Nest pieces carry what")', () => {
  const given = config();
  let consumer: Consumer;
  const envBefore = { ...process.env };

  beforeAll(async () => {
    process.env.MCP_DI_TEST_ONLY = 'from the environment';
    const app = await NestFactory.createApplicationContext(
      { module: class Root {}, imports: [GatewayConfigModule.forRoot(given), FeatureModule] },
      { logger: false },
    );
    consumer = app.get(Consumer);
    await app.close();
  });

  afterAll(() => {
    delete process.env.MCP_DI_TEST_ONLY;
  });

  it('serves typed values from ConfigService<GatewayConfig, true>, the same objects as validated', () => {
    const configService = consumer.configService;
    expect(configService.get('mcp.identity', { infer: true })).toBe('gw-di-test');
    expect(configService.get('mcp', { infer: true })).toBe(given.mcp);
    expect(
      configService.get('sessionKeys', { infer: true })[0]?.key.equals(Buffer.alloc(32, 7)),
    ).toBe(true);
    expect(configService.get('server.port', { infer: true })).toBe(0);
  });

  it('derives GATEWAY_CONFIG from ConfigService: every field, nothing copied', () => {
    expect(consumer.whole).toEqual(given);
    expect(consumer.whole.mcp).toBe(given.mcp);
    expect(consumer.whole.sessionKeys).toBe(given.sessionKeys);
  });

  it('never reads process.env: no fallback in get, nothing written into the environment', () => {
    const untyped = consumer.configService as unknown as ConfigService;
    expect(untyped.get('MCP_DI_TEST_ONLY')).toBeUndefined();
    expect(untyped.get('PATH')).toBeUndefined();
    expect(Object.keys(process.env).filter((k) => !(k in envBefore))).toEqual(['MCP_DI_TEST_ONLY']);
  });
});
