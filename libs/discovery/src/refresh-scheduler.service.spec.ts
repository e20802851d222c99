import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { GATEWAY_CONFIG, McpConfig, type GatewayConfig } from '@app/config';
import { Clock, RegistryService } from '@app/registry';
import { BundleManifestPuller } from './bundle-manifest-puller';
import { BundleRefreshService } from './bundle-refresh.service';
import { SOURCE_PULLERS } from './source-puller';
import { ManifestFetcher } from './manifest-fetcher.service';
import {
  MONOTONIC_MS,
  RANDOM,
  REFRESH_HEARTBEAT_JOB,
  RefreshScheduler,
} from './refresh-scheduler.service';

Logger.overrideLogger(false);

function config(intervalSeconds: number, jitterSeconds: number): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw';
  mcp.registry.refreshIntervalSeconds = intervalSeconds;
  mcp.registry.refreshJitterSeconds = jitterSeconds;
  return { mcp } as GatewayConfig;
}

/**
 * The scheduler inside a real Nest module with ScheduleModule.forRoot(), so the @Cron
 * heartbeat is registered and fired by @nestjs/schedule itself, under jest's fake clock
 * (Date and timers; the monotonic clock is Date.now here). The clock starts at 0, on a whole
 * second: the heartbeats fire at 1000, 2000, … ms.
 */
async function setup(
  random: number,
  intervalSeconds = 30,
  jitterSeconds = 5,
  warmStartFails = false,
) {
  const refresh = {
    refreshNow: jest.fn(() => Promise.resolve()),
    tick: jest.fn(() => Promise.resolve()),
  };
  const registry = {
    warmStart: jest.fn(() =>
      warmStartFails ? Promise.reject(new Error('boom')) : Promise.resolve(),
    ),
  };
  const moduleRef: TestingModule = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot()],
    providers: [
      RefreshScheduler,
      { provide: GATEWAY_CONFIG, useValue: config(intervalSeconds, jitterSeconds) },
      { provide: BundleRefreshService, useValue: refresh },
      { provide: RegistryService, useValue: registry },
      { provide: RANDOM, useValue: () => random },
      { provide: MONOTONIC_MS, useValue: () => Date.now() },
    ],
  }).compile();
  await moduleRef.init();
  return {
    moduleRef,
    service: moduleRef.get(RefreshScheduler),
    scheduler: moduleRef.get(SchedulerRegistry),
    refresh,
    registry,
  };
}

describe('RefreshScheduler (contract §3 "조회 주기와 jitter", §6 "기동 시")', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(0);
  });
  afterEach(() => jest.useRealTimers());

  it('pulls once at startup, right away and without jitter, after the warm start', async () => {
    const { moduleRef, service, refresh, registry } = await setup(0.99);
    await service.whenStarted();
    expect(registry.warmStart).toHaveBeenCalledTimes(1);
    expect(refresh.refreshNow).toHaveBeenCalledTimes(1);
    expect(registry.warmStart.mock.invocationCallOrder[0]).toBeLessThan(
      refresh.refreshNow.mock.invocationCallOrder[0] ?? 0,
    );
    expect(Date.now()).toBe(0);
    await moduleRef.close();
  });

  it('drives the schedule with a @Cron heartbeat of @nestjs/schedule, every second', async () => {
    const { moduleRef, scheduler } = await setup(0);
    const job = scheduler.getCronJob(REFRESH_HEARTBEAT_JOB);
    expect(job.cronTime.source).toBe('* * * * * *');
    expect(job.isActive).toBe(true);
    await moduleRef.close();
  });

  it('adds a random 0..refreshJitterSeconds only to the first scheduled refresh, then refreshes every interval', async () => {
    const { moduleRef, refresh } = await setup(0.5, 30, 5); // jitter 2.5 s: due at 32.5 s
    await jest.advanceTimersByTimeAsync(32_499);
    expect(refresh.tick).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1_001); // the heartbeat at 33 s
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(29_000); // 62.5 s: the next is due at 62.5 s
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1_000); // the heartbeat at 63 s
    expect(refresh.tick).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(refresh.tick).toHaveBeenCalledTimes(3);
    await moduleRef.close();
  });

  it('keeps an interval that does not divide a minute (7 s) exact: 10 refreshes in 70 s', async () => {
    const { moduleRef, refresh } = await setup(0, 7, 0);
    await jest.advanceTimersByTimeAsync(69_999);
    expect(refresh.tick).toHaveBeenCalledTimes(9);
    await jest.advanceTimersByTimeAsync(1);
    expect(refresh.tick).toHaveBeenCalledTimes(10);
    await moduleRef.close();
  });

  it('never waits longer than interval + refreshJitterSeconds for the first scheduled refresh', async () => {
    const { moduleRef, refresh } = await setup(0.999999, 10, 5);
    await jest.advanceTimersByTimeAsync(15_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    await moduleRef.close();
  });

  it('stops the heartbeat on shutdown: no scheduled refresh after the application closes', async () => {
    const { moduleRef, refresh, scheduler } = await setup(0, 1, 0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    const job = scheduler.getCronJob(REFRESH_HEARTBEAT_JOB);
    await moduleRef.close();
    expect(job.isActive).toBe(false);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
  });

  it('keeps going when the warm start fails', async () => {
    const { moduleRef, service, refresh } = await setup(0, 30, 5, true);
    await service.whenStarted();
    expect(refresh.refreshNow).toHaveBeenCalledTimes(1);
    await moduleRef.close();
  });
});

describe('RefreshScheduler with the real BundleRefreshService: one round at a time', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(0);
  });
  afterEach(() => jest.useRealTimers());

  it('does not start a scheduled round while the previous one is still pulling', async () => {
    let release: () => void = () => undefined;
    const fetches: number[] = [];
    const fetcher = {
      fetch: jest.fn(() => {
        fetches.push(Date.now());
        // the first pull (startup) answers at once; the next one hangs until released
        if (fetches.length === 1) return Promise.resolve({ ok: false, errorType: 'X', detail: '' });
        return new Promise((resolve) => {
          release = () => resolve({ ok: false, errorType: 'X', detail: '' });
        });
      }),
      readFile: jest.fn(),
    };
    const registry = {
      warmStart: jest.fn(() => Promise.resolve()),
      enabledBundles: () => [{ id: 'b', manifestUrl: 'http://127.0.0.1:1/m', enabled: true }],
      applyPulls: jest.fn(() => Promise.resolve()),
      isFirstAttempt: () => false,
      hasNoCopy: () => false,
    };
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot()],
      providers: [
        RefreshScheduler,
        BundleRefreshService,
        BundleManifestPuller,
        {
          provide: SOURCE_PULLERS,
          useFactory: (bundles: BundleManifestPuller) => [bundles],
          inject: [BundleManifestPuller],
        },
        Clock,
        { provide: ManifestFetcher, useValue: fetcher },
        { provide: GATEWAY_CONFIG, useValue: config(2, 0) },
        { provide: RegistryService, useValue: registry },
        { provide: RANDOM, useValue: () => 0 },
        { provide: MONOTONIC_MS, useValue: () => Date.now() },
      ],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(RefreshScheduler).whenStarted();
    expect(fetches).toEqual([0]);
    await jest.advanceTimersByTimeAsync(2_000); // due at 2 s: a round starts and hangs
    expect(fetches).toEqual([0, 2_000]);
    await jest.advanceTimersByTimeAsync(6_000); // due at 4, 6, 8 s: all skipped
    expect(fetches).toEqual([0, 2_000]);
    release();
    await jest.advanceTimersByTimeAsync(2_000); // due at 10 s: the next round
    expect(fetches).toEqual([0, 2_000, 10_000]);
    expect(registry.applyPulls).toHaveBeenCalledTimes(2);
    release();
    await moduleRef.close();
  });
});
