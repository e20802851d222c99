import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';

/**
 * Every top-level key of GatewayConfig. `satisfies` makes a key added to the interface a
 * compile error here until it is listed, so GATEWAY_CONFIG never loses a field.
 */
const GATEWAY_CONFIG_KEYS = {
  profile: true,
  sources: true,
  mcp: true,
  bundles: true,
  upstreams: true,
  server: true,
  redisServer: true,
  authSecrets: true,
  sessionKeys: true,
  sessionKeysEphemeral: true,
  logLevel: true,
  version: true,
  admin: true,
} as const satisfies Record<keyof GatewayConfig, true>;

/** The whole GatewayConfig as ConfigService holds it (the same objects, not copies). */
export function gatewayConfigFrom(config: ConfigService<GatewayConfig, true>): GatewayConfig {
  const whole: Partial<Record<keyof GatewayConfig, unknown>> = {};
  for (const key of Object.keys(GATEWAY_CONFIG_KEYS) as (keyof GatewayConfig)[]) {
    whole[key] = config.get(key, { infer: true });
  }
  return whole as GatewayConfig;
}

/**
 * Hands the validated GatewayConfig to every module through `@nestjs/config` (the design
 * card): `ConfigService<GatewayConfig, true>` is global, typed by GatewayConfig, and holds
 * nothing but the validated config: no `.env` file, no `process.env` fallback (only
 * libs/config reads the environment, once). The config is loaded, and a bad one refused with
 * one message, in apps/gateway/src/main.ts before Nest starts, so it never gets as far as DI.
 *
 * Services take the config through one door, `@Inject(GATEWAY_CONFIG)`: a provider derived
 * from ConfigService (the same objects), so every constructor and unit test takes a plain
 * GatewayConfig and none reads dotted paths; ConfigService stays the one source it comes from.
 * Lint keeps it so (eslint.config.mjs: `@nestjs/config` only here).
 */
@Module({})
export class GatewayConfigModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayConfigModule,
      global: true,
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          // Neither copy process.env into the config nor fall back to it in ConfigService.get.
          validatePredefined: false,
          skipProcessEnv: true,
          load: [() => ({ ...config })],
        }),
      ],
      providers: [
        {
          provide: GATEWAY_CONFIG,
          useFactory: gatewayConfigFrom,
          inject: [ConfigService],
        },
      ],
      exports: [GATEWAY_CONFIG],
    };
  }
}
