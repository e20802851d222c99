import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Cron, CronExpression, SchedulerRegistry } from '@nestjs/schedule';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { BundleRefreshService } from './bundle-refresh.service';
import { RegistryService } from '@app/registry';
import { RefreshTimetable } from './refresh-timetable';

/** Random source in [0, 1); a provider so the jitter can be pinned in tests. */
export const RANDOM = Symbol('RANDOM');
export type RandomSource = () => number;

/** A monotonic clock in ms; a provider so the schedule can be pinned in tests. */
export const MONOTONIC_MS = Symbol('MONOTONIC_MS');
export type MonotonicMs = () => number;

/** The @nestjs/schedule cron job (in SchedulerRegistry) that drives the scheduled refreshes. */
export const REFRESH_HEARTBEAT_JOB = 'bundle-refresh-heartbeat';

/**
 * Starts discovery (contract §3 "조회 주기와 jitter", §6 "기동 시"): right after bootstrap,
 * the registry's warm start (Redis last-good copies) and one immediate pull of every bundle,
 * without jitter and without holding up the listeners. Then the scheduled refreshes: a
 * `@Cron` heartbeat of @nestjs/schedule runs every second and starts a round when the
 * RefreshTimetable says one is due, so refreshIntervalSeconds (any value, not only divisors
 * of a minute) and the random 0..refreshJitterSeconds added to the first scheduled refresh
 * only (replicas started together spread out) hold to within one second. A round still
 * running when the next is due is not doubled: BundleRefreshService.tick() skips it.
 */
@Injectable()
export class RefreshScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Discovery');
  private stopped = false;
  private startup?: Promise<void>;
  private timetable?: RefreshTimetable;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly refresh: BundleRefreshService,
    private readonly scheduler: SchedulerRegistry,
    @Inject(RANDOM) private readonly random: RandomSource,
    @Inject(MONOTONIC_MS) private readonly now: MonotonicMs,
    private readonly registry: RegistryService,
  ) {}

  onApplicationBootstrap(): void {
    this.startup = this.runStartup();
    const { refreshIntervalSeconds, refreshJitterSeconds } = this.config.mcp.registry;
    const intervalMs = refreshIntervalSeconds * 1000;
    const jitterMs = Math.floor(this.random() * refreshJitterSeconds * 1000);
    this.timetable = new RefreshTimetable(this.now(), intervalMs, jitterMs);
    this.logger.log(
      `Refresh every ${refreshIntervalSeconds} s; the first scheduled refresh in ${((intervalMs + jitterMs) / 1000).toFixed(1)} s`,
    );
  }

  /** Resolves when the warm start and the first pull are done. */
  /**
   * ms until the next scheduled refresh round, or undefined before the schedule has started
   * (a bundle's copy is not refreshed sooner, so it is the ttlMs a bundle contributes to a
   * 2026 list's cache hints; docs/operations.md §11 "Cache hints").
   */
  msUntilNextRefresh(): number | undefined {
    const next = this.timetable?.next;
    return next === undefined ? undefined : Math.max(0, Math.round(next - this.now()));
  }

  whenStarted(): Promise<void> {
    return this.startup ?? Promise.resolve();
  }

  /**
   * The heartbeat: starts a scheduled round when one is due. Never throws, never waits for
   * the round (a long round does not hold the next heartbeats; tick() skips while it runs).
   */
  @Cron(CronExpression.EVERY_SECOND, { name: REFRESH_HEARTBEAT_JOB })
  heartbeat(): void {
    if (this.stopped || this.timetable === undefined) return;
    if (this.timetable.takeDue(this.now())) void this.refresh.tick();
  }

  /** Stops the schedule for good (idempotent); a round already running finishes on its own. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.scheduler.doesExist('cron', REFRESH_HEARTBEAT_JOB)) {
      void this.scheduler.getCronJob(REFRESH_HEARTBEAT_JOB).stop();
    }
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
}
