import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { RegistryHealthIndicator } from './registry-health.indicator';

/** Kubernetes probes, on MANAGEMENT_PORT only. */
@Controller('actuator/health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly registry: RegistryHealthIndicator,
  ) {}

  /** Up while the process serves HTTP; never depends on Tool Services or Redis. */
  @Get('liveness')
  @HealthCheck()
  liveness(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** 200 when ready (contract §6), 503 otherwise. */
  @Get('readiness')
  @HealthCheck()
  readiness(): Promise<HealthCheckResult> {
    return this.health.check([() => this.registry.check('catalog')]);
  }

  /**
   * The aggregate a generic monitor asks first (Spring Boot's `/actuator/health`, which the
   * paths here follow): the readiness check, since it is what says the gateway can serve.
   */
  @Get()
  @HealthCheck()
  aggregate(): Promise<HealthCheckResult> {
    return this.readiness();
  }
}
