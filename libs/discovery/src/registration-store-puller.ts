import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { RegistrationSync } from '@app/registrations';

/** The store is read at most this often, and at least this often (ms). */
const MIN_READ_MILLIS = 500;
const MAX_READ_MILLIS = 30_000;

/**
 * The runtime registrations' puller (docs/architecture.md "Sources as intakes"): it reads the
 * registration store before the first refresh round (the registrations are sources of that
 * round), then on its own timetable, every half refresh interval (0.5–30 s), so a registration
 * another replica wrote reaches this one's catalog within about one round
 * (docs/operations.md §15 "One answer on every replica"). The registered upstreams' lists are
 * then pulled by UpstreamListPuller with the configured ones.
 */
@Injectable()
export class RegistrationStorePuller implements OnModuleInit, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registrations: RegistrationSync,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.registrations.sync();
    const intervalMs = Math.min(
      MAX_READ_MILLIS,
      Math.max(MIN_READ_MILLIS, (this.config.mcp.registry.refreshIntervalSeconds * 1000) / 2),
    );
    this.timer = setInterval(() => void this.registrations.sync(), intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
