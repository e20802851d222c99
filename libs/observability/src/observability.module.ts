import { Global, Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';

/** Metrics shared by every module (the logger is installed in main.ts, before Nest starts). */
@Global()
@Module({
  providers: [{ provide: GatewayMetrics, useValue: new GatewayMetrics() }],
  exports: [GatewayMetrics],
})
export class ObservabilityModule {}
