import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { RegistryService } from '@app/registry';

/**
 * Readiness by contract §6: up once the first pull attempt has finished and a usable
 * catalog exists (a remote manifest, a fallback file or a Redis last-good; an empty but
 * valid manifest counts). Down before that, and while draining for shutdown.
 */
@Injectable()
export class RegistryHealthIndicator {
  private draining = false;

  constructor(
    private readonly registry: RegistryService,
    private readonly health: HealthIndicatorService,
  ) {}

  /** Called first on SIGTERM, so the load balancer stops sending new requests. */
  markDraining(): void {
    this.draining = true;
  }

  check(key: string): HealthIndicatorResult {
    const indicator = this.health.check(key);
    const catalog = this.registry.current();
    const detail = {
      firstPullAttemptDone: this.registry.firstPullAttemptDone,
      catalogPublished: catalog !== undefined,
      toolCount: catalog?.toolCount ?? 0,
      draining: this.draining,
    };
    return this.registry.isReady() && !this.draining
      ? indicator.up(detail)
      : indicator.down(detail);
  }
}
