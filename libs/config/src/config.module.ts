import { Module, type DynamicModule } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';

/**
 * Hands the validated GatewayConfig to every module. The config is loaded (and the boot
 * refused) before Nest starts, in apps/gateway/src/main.ts, so a bad config never gets as far
 * as dependency injection.
 */
@Module({})
export class GatewayConfigModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayConfigModule,
      global: true,
      providers: [{ provide: GATEWAY_CONFIG, useValue: config }],
      exports: [GATEWAY_CONFIG],
    };
  }
}
