import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { GatewayConfig } from '@app/config';
import { McpConfig } from '@app/config';
import type { RegistryService } from '@app/registry';
import type { BundleRefreshService } from './bundle-refresh.service';
import { FIRST_REFRESH_JOB, REFRESH_JOB, RefreshScheduler } from './refresh-scheduler.service';

Logger.overrideLogger(false);

function config(intervalSeconds: number, jitterSeconds: number): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw';
  mcp.registry.refreshIntervalSeconds = intervalSeconds;
  mcp.registry.refreshJitterSeconds = jitterSeconds;
  return { mcp } as GatewayConfig;
}

describe('RefreshScheduler (contract §3 "조회 주기와 jitter", §6 "기동 시")', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function setup(random: number, intervalSeconds = 30, jitterSeconds = 5) {
    const calls: string[] = [];
    const refresh = {
      refreshNow: jest.fn(() => {
        calls.push('startup');
        return Promise.resolve();
      }),
      tick: jest.fn(() => {
        calls.push(`tick@${Date.now()}`);
        return Promise.resolve();
      }),
    } as unknown as BundleRefreshService;
    const registry = { warmStart: jest.fn(() => Promise.resolve()) } as unknown as RegistryService;
    const scheduler = new SchedulerRegistry();
    const service = new RefreshScheduler(
      config(intervalSeconds, jitterSeconds),
      refresh,
      scheduler,
      () => random,
      registry,
    );
    return { service, refresh, registry, scheduler, calls };
  }

  it('pulls once at startup, right away and without jitter, after the warm start', async () => {
    jest.setSystemTime(0);
    const { service, refresh, registry } = setup(0.99);
    service.onApplicationBootstrap();
    await service.whenStarted();
    expect(registry.warmStart).toHaveBeenCalledTimes(1);
    expect(refresh.refreshNow).toHaveBeenCalledTimes(1);
    expect(Date.now()).toBe(0);
    service.stop();
  });

  it('adds a random 0..refreshJitterSeconds only to the first scheduled refresh, then refreshes every interval', async () => {
    jest.setSystemTime(0);
    const { service, refresh, scheduler } = setup(0.5, 30, 5); // jitter 2.5 s
    service.onApplicationBootstrap();
    expect(scheduler.doesExist('timeout', FIRST_REFRESH_JOB)).toBe(true);
    await jest.advanceTimersByTimeAsync(32_499);
    expect(refresh.tick).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    expect(scheduler.doesExist('interval', REFRESH_JOB)).toBe(true);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(refresh.tick).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(refresh.tick).toHaveBeenCalledTimes(3);
    service.stop();
  });

  it('never waits longer than interval + refreshJitterSeconds for the first scheduled refresh', async () => {
    const { service, refresh } = setup(0.999999, 10, 5);
    service.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(15_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    service.stop();
  });

  it('stops every registered job on shutdown', async () => {
    const { service, refresh, scheduler } = setup(0, 1, 0);
    service.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
    service.onApplicationShutdown();
    expect(scheduler.doesExist('interval', REFRESH_JOB)).toBe(false);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(refresh.tick).toHaveBeenCalledTimes(1);
  });

  it('keeps going when the warm start fails', async () => {
    const { service, refresh, registry } = setup(0);
    (registry.warmStart as jest.Mock).mockRejectedValueOnce(new Error('boom'));
    service.onApplicationBootstrap();
    await service.whenStarted();
    expect(refresh.refreshNow).toHaveBeenCalledTimes(1);
    service.stop();
  });
});
