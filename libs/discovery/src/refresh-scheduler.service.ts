import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { BundleRefreshService } from './bundle-refresh.service';
import { RegistryService } from '@app/registry';

/** Random source in [0, 1); a provider so the jitter can be pinned in tests. */
export const RANDOM = Symbol('RANDOM');
export type RandomSource = () => number;

export const FIRST_REFRESH_JOB = 'bundle-refresh-first';
export const REFRESH_JOB = 'bundle-refresh';

/**
 * Starts discovery (contract §3 "조회 주기와 jitter", §6 "기동 시"): right after bootstrap, the
 * registry's warm start (Redis last-good copies) and one immediate pull of every bundle, without jitter and
 * without holding up the listeners; then a refresh every refreshIntervalSeconds, registered
 * at runtime with @nestjs/schedule, where only the first scheduled refresh waits an extra
 * random 0..refreshJitterSeconds so that replicas started together spread out.
 */
@Injectable()
export class RefreshScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Discovery');
  private stopped = false;
  private startup?: Promise<void>;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly refresh: BundleRefreshService,
    private readonly scheduler: SchedulerRegistry,
    @Inject(RANDOM) private readonly random: RandomSource,
    private readonly registry: RegistryService,
  ) {}

  onApplicationBootstrap(): void {
    this.startup = this.runStartup();
    this.scheduleRefreshes();
  }

  /** Resolves when the warm start and the first pull are done. */
  whenStarted(): Promise<void> {
    return this.startup ?? Promise.resolve();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const name of [FIRST_REFRESH_JOB]) {
      if (this.scheduler.doesExist('timeout', name)) this.scheduler.deleteTimeout(name);
    }
    if (this.scheduler.doesExist('interval', REFRESH_JOB))
      this.scheduler.deleteInterval(REFRESH_JOB);
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  private async runStartup(): Promise<void> {
    // contract §11: warm start from the shared last-good copies first, then the immediate pull.
    try {
      await this.registry.warmStart();
    } catch (err) {
      this.logger.error(
        `Warm start failed (${err instanceof Error ? err.name : typeof err}); continuing without it`,
      );
    }
    await this.refresh.refreshNow();
  }

  private scheduleRefreshes(): void {
    const intervalMs = this.config.mcp.registry.refreshIntervalSeconds * 1000;
    const jitterMs = Math.floor(
      this.random() * this.config.mcp.registry.refreshJitterSeconds * 1000,
    );
    const first = setTimeout(() => {
      if (this.stopped) return;
      this.scheduler.deleteTimeout(FIRST_REFRESH_JOB);
      void this.refresh.tick();
      const every = setInterval(() => {
        if (!this.stopped) void this.refresh.tick();
      }, intervalMs);
      this.scheduler.addInterval(REFRESH_JOB, every);
    }, intervalMs + jitterMs);
    this.scheduler.addTimeout(FIRST_REFRESH_JOB, first);
    this.logger.log(
      `Refresh every ${intervalMs / 1000} s; the first scheduled refresh in ${((intervalMs + jitterMs) / 1000).toFixed(1)} s`,
    );
  }
}
