import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import { McpConfig } from '@app/config';
import type { RegistryService, UpstreamPullResult } from '@app/registry';
import { ListChangedRefresh } from './list-changed-refresh.service';
import type { UpstreamListPuller } from './upstream-list-puller.service';

function config(minIntervalMs: number): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw';
  mcp.registry.listChangedRefreshMinIntervalMillis = minIntervalMs;
  return { mcp } as GatewayConfig;
}

const TOOLS = 'notifications/tools/list_changed';

/**
 * A puller whose every pull waits for the test to finish it, and a registry that records what
 * is applied: the coalescing between them is all that is observed.
 */
function setup(minIntervalMs: number, ids: readonly string[] = ['storm', 'quiet']) {
  const pulls: Array<{ id: string; startedAt: number; finish: () => void }> = [];
  const applied: string[] = [];
  let enabled = ids.map((id) => ({ id, enabled: true }) as UpstreamDefinition);
  const puller = {
    pull: jest.fn(
      (upstream: UpstreamDefinition) =>
        new Promise<UpstreamPullResult>((resolve) => {
          pulls.push({
            id: upstream.id,
            startedAt: Date.now(),
            finish: () =>
              resolve({
                upstreamId: upstream.id,
                kind: 'failed',
                errorType: 'UpstreamTimeoutError',
                detail: 'test',
                attemptedAt: new Date(),
              }),
          });
        }),
    ),
  } as unknown as UpstreamListPuller;
  const registry = {
    enabledUpstreams: () => enabled,
    current: () => undefined,
    applyUpstreamPull: jest.fn((result: UpstreamPullResult) => {
      applied.push(result.upstreamId);
      return Promise.resolve();
    }),
    upstreamAnnounced: jest.fn(),
  } as unknown as RegistryService;
  const service = new ListChangedRefresh(registry, puller, config(minIntervalMs));
  const finishPulls = async () => {
    for (const p of pulls.splice(0)) p.finish();
    await jest.advanceTimersByTimeAsync(0);
  };
  const disable = (id: string) => (enabled = enabled.filter((u) => u.id !== id));
  return { service, puller, pulls, applied, finishPulls, disable, registry };
}

describe('ListChangedRefresh: an upstream list_changed refreshes that upstream, flood-limited', () => {
  let logged: string[];
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(1_000_000);
    logged = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => {
      logged.push(String(message));
    });
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('pulls the announcing upstream at once, and only it', async () => {
    const { service, puller, pulls, applied, finishPulls } = setup(1000);
    service.changed('storm', TOOLS);
    expect(puller.pull).toHaveBeenCalledTimes(1);
    expect(pulls.map((p) => p.id)).toEqual(['storm']);
    await finishPulls();
    expect(applied).toEqual(['storm']);
  });

  it('an announcement that arrived while a pull was in flight is compared from before that pull applied', async () => {
    const { service, registry, finishPulls } = setup(1000);
    const c0 = { name: 'c0' };
    const c1 = { name: 'c1' };
    let current: object = c0;
    (registry as unknown as { current: () => object }).current = () => current;
    service.changed('storm', TOOLS); // pulls at once
    service.changed('storm', TOOLS); // the same change told twice (two listens): owed
    current = c1; // the first pull published the change
    await finishPulls();
    await jest.advanceTimersByTimeAsync(1000);
    await finishPulls();
    // both announcements are compared from c0: the change the first pull published counts
    expect(registry.upstreamAnnounced).toHaveBeenNthCalledWith(1, 'storm', [TOOLS], c0);
    expect(registry.upstreamAnnounced).toHaveBeenNthCalledWith(2, 'storm', [TOOLS], c0);
  });

  it('tells the registry, once the pull is applied, which lists the upstream announced', async () => {
    const { service, registry, finishPulls } = setup(1000);
    service.changed('storm', TOOLS);
    service.changed('storm', 'notifications/prompts/list_changed'); // owed: the next pull's
    await finishPulls();
    expect(registry.upstreamAnnounced).toHaveBeenCalledWith('storm', [TOOLS], undefined);
    await jest.advanceTimersByTimeAsync(1000);
    await finishPulls();
    expect(registry.upstreamAnnounced).toHaveBeenLastCalledWith(
      'storm',
      ['notifications/prompts/list_changed'],
      undefined,
    );
  });

  it('100 notifications 10 ms apart: one pull at once, one after the burst (<= 3), one log line', async () => {
    const { service, pulls, applied, finishPulls } = setup(1000);
    const started: number[] = [];
    for (let i = 0; i < 100; i++) {
      service.changed('storm', i % 3 === 0 ? 'notifications/resources/list_changed' : TOOLS);
      for (const p of pulls) if (!started.includes(p.startedAt)) started.push(p.startedAt);
      await finishPulls(); // each pull answers within the 10 ms
      await jest.advanceTimersByTimeAsync(10);
    }
    await jest.advanceTimersByTimeAsync(1000);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(5000);
    await finishPulls();
    expect(applied.length).toBeGreaterThanOrEqual(2);
    expect(applied.length).toBeLessThanOrEqual(3);
    expect(applied.every((id) => id === 'storm')).toBe(true);
    expect(logged.filter((l) => l.includes('list_changed'))).toHaveLength(1);
  });

  it('a notification during a pull gets a pull that started after it (never dropped), after the flood limit', async () => {
    const { service, puller, pulls, finishPulls } = setup(1000);
    service.changed('storm', TOOLS);
    await jest.advanceTimersByTimeAsync(100);
    service.changed('storm', TOOLS); // arrives while the first pull runs
    expect(puller.pull).toHaveBeenCalledTimes(1);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(898);
    expect(puller.pull).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(2);
    expect(puller.pull).toHaveBeenCalledTimes(2);
    expect(pulls[0]!.startedAt).toBeGreaterThanOrEqual(1_000_000 + 1000);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(5000);
    expect(puller.pull).toHaveBeenCalledTimes(2);
  });

  it('a slow pull is not doubled: the owed pull starts when it is done', async () => {
    const { service, puller, finishPulls } = setup(100);
    service.changed('storm', TOOLS);
    service.changed('storm', TOOLS);
    await jest.advanceTimersByTimeAsync(3000); // the first pull still runs
    expect(puller.pull).toHaveBeenCalledTimes(1);
    await finishPulls();
    expect(puller.pull).toHaveBeenCalledTimes(2);
  });

  it('upstreams are limited each on its own: a storm of one does not delay another', () => {
    const { service, puller, pulls } = setup(1000);
    service.changed('storm', TOOLS);
    service.changed('storm', TOOLS);
    service.changed('quiet', TOOLS);
    expect(puller.pull).toHaveBeenCalledTimes(2);
    expect(pulls.map((p) => p.id)).toEqual(['storm', 'quiet']);
  });

  it('a new burst after a quiet interval pulls at once; its line is counted into one a minute', async () => {
    const { service, puller, finishPulls } = setup(1000);
    service.changed('storm', TOOLS);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(1500);
    service.changed('storm', TOOLS);
    expect(puller.pull).toHaveBeenCalledTimes(2);
    // the upstream decides how often it bursts: one line a minute per upstream at most
    expect(logged.filter((l) => l.includes('list_changed'))).toHaveLength(1);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(60_000);
    // written when the minute of the first line is over (one burst held back: its own line)
    expect(logged.filter((l) => l.includes('list_changed'))).toHaveLength(2);
    service.changed('storm', TOOLS);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(1500);
    service.changed('storm', TOOLS);
    await finishPulls();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(logged.filter((l) => l.includes('list_changed')).at(-1)).toContain(
      'storm: 2 bursts of list_changed since the last line',
    );
  });

  it('an upstream removed meanwhile is not pulled; nothing is pulled after shutdown', async () => {
    const { service, puller, finishPulls, disable } = setup(1000);
    service.changed('storm', TOOLS);
    service.changed('storm', TOOLS);
    disable('storm');
    await finishPulls();
    await jest.advanceTimersByTimeAsync(2000);
    expect(puller.pull).toHaveBeenCalledTimes(1);
    service.changed('quiet', TOOLS);
    service.changed('quiet', TOOLS);
    await finishPulls();
    service.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(2000);
    service.changed('quiet', TOOLS);
    expect(puller.pull).toHaveBeenCalledTimes(2);
  });
});
