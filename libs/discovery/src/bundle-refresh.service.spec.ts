import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { GatewayConfig } from '@app/config';
import { McpConfig } from '@app/config';
import {
  Clock,
  type BundlePullResult,
  type RegistryService,
  type UpstreamPullResult,
} from '@app/registry';
import { BundleManifestPuller } from './bundle-manifest-puller';
import { BundleRefreshService } from './bundle-refresh.service';
import type { SourcePuller, SourcePulls } from './source-puller';
import type { FetchedManifest, ManifestFetcher } from './manifest-fetcher.service';

Logger.overrideLogger(false);

function config(minIntervalMs: number): GatewayConfig {
  const mcp = new McpConfig();
  mcp.identity = 'gw';
  mcp.registry.notFoundRefreshMinIntervalMillis = minIntervalMs;
  return { mcp } as GatewayConfig;
}

/**
 * A fetcher whose every pull waits for the test to finish it, and a registry that records the
 * rounds applied: what the refresh service does between them is all that is observed.
 */
function setup(minIntervalMs: number) {
  const pulls: Array<{ startedAt: number; finish: () => void }> = [];
  const applied: number[] = [];
  const fetcher = {
    fetch: jest.fn(
      () =>
        new Promise<FetchedManifest>((resolve) => {
          pulls.push({
            startedAt: Date.now(),
            finish: () => resolve({ ok: true, bytes: Buffer.from('{}'), digest: 'd' }),
          });
        }),
    ),
  } as unknown as ManifestFetcher;
  const registry = {
    enabledBundles: () => [{ id: 'a', manifestUrl: 'http://127.0.0.1:1/m', enabled: true }],
    applyPulls: jest.fn((pulls: readonly SourcePulls[]) => {
      applied.push(pulls.reduce((n, p) => n + p.results.length, 0));
      return Promise.resolve();
    }),
  } as unknown as RegistryService;
  const service = new BundleRefreshService(
    registry,
    [new BundleManifestPuller(fetcher, registry, new Clock())],
    config(minIntervalMs),
  );
  /** Finishes every pull started so far and lets the round be applied. */
  const finishPulls = async () => {
    for (const p of pulls.splice(0)) p.finish();
    await jest.advanceTimersByTimeAsync(0);
  };
  return { service, fetcher, pulls, applied, finishPulls };
}

/** Whether a promise has settled, without waiting for it. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await jest.advanceTimersByTimeAsync(0);
  return done;
}

describe('BundleRefreshService: the contract §8 refresh for an unknown tool name', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(1_000_000);
  });
  afterEach(() => jest.useRealTimers());

  it('answers a miss from a round that started after it, even right after a finished round (never skipped)', async () => {
    const { service, fetcher, finishPulls } = setup(1000);
    const startup = service.refreshNow();
    await finishPulls();
    await startup;
    expect(fetcher.fetch).toHaveBeenCalledTimes(1);

    await jest.advanceTimersByTimeAsync(200); // the miss comes 200 ms after the startup round
    const miss = service.refreshForUnknownTool();
    expect(await settled(miss)).toBe(false);
    // the flood limit delays the round to 1000 ms after the previous round started...
    await jest.advanceTimersByTimeAsync(799);
    expect(fetcher.fetch).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    // ...but never drops it
    expect(fetcher.fetch).toHaveBeenCalledTimes(2);
    expect(await settled(miss)).toBe(false);
    await finishPulls();
    expect(await settled(miss)).toBe(true);
  });

  it('does not count a round that was already running when the miss arrived', async () => {
    const { service, fetcher, pulls, applied, finishPulls } = setup(0);
    const running = service.refreshNow();
    expect(pulls).toHaveLength(1);
    const miss = service.refreshForUnknownTool();
    await finishPulls();
    await running;
    expect(applied).toHaveLength(1);
    // the running round is done, the miss is still waiting for its own round, which has started
    expect(await settled(miss)).toBe(false);
    expect(fetcher.fetch).toHaveBeenCalledTimes(2);
    await finishPulls();
    expect(await settled(miss)).toBe(true);
    expect(applied).toHaveLength(2);
  });

  it('lets misses that arrive together share one round', async () => {
    const { service, fetcher, finishPulls } = setup(1000);
    const misses = Array.from({ length: 50 }, () => service.refreshForUnknownTool());
    await jest.advanceTimersByTimeAsync(0); // the round starts on the next turn of the event loop
    expect(fetcher.fetch).toHaveBeenCalledTimes(1);
    // more misses while that round runs: they need a round that starts after them, one for all
    const later = Array.from({ length: 50 }, () => service.refreshForUnknownTool());
    await finishPulls();
    for (const m of misses) expect(await settled(m)).toBe(true);
    expect(await settled(Promise.all(later))).toBe(false);
    await jest.advanceTimersByTimeAsync(1000);
    expect(fetcher.fetch).toHaveBeenCalledTimes(2);
    await finishPulls();
    expect(await settled(Promise.all(later))).toBe(true);
  });

  it('paces a stream of misses at one round per notFoundRefreshMinIntervalMillis', async () => {
    const { service, pulls, finishPulls } = setup(1000);
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const miss = service.refreshForUnknownTool();
      await jest.advanceTimersByTimeAsync(1000);
      starts.push(pulls[0]!.startedAt);
      await finishPulls();
      await miss;
    }
    for (let i = 1; i < starts.length; i++)
      expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('starts a miss round held by the flood limit at the next scheduled tick instead of a second round', async () => {
    const { service, fetcher, finishPulls } = setup(10_000);
    const startup = service.refreshNow();
    await finishPulls();
    await startup;
    const miss = service.refreshForUnknownTool();
    await jest.advanceTimersByTimeAsync(100);
    const tick = service.tick();
    expect(fetcher.fetch).toHaveBeenCalledTimes(2);
    await finishPulls();
    await tick;
    expect(await settled(miss)).toBe(true);
    await jest.advanceTimersByTimeAsync(20_000);
    expect(fetcher.fetch).toHaveBeenCalledTimes(2); // the held round was the tick's, not an extra one
  });

  it('answers a waiting miss at shutdown from the catalog as it is, and starts no round after it', async () => {
    const { service, fetcher, finishPulls } = setup(5000);
    const startup = service.refreshNow();
    await finishPulls();
    await startup;
    const miss = service.refreshForUnknownTool();
    service.onApplicationShutdown();
    expect(await settled(miss)).toBe(true);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(fetcher.fetch).toHaveBeenCalledTimes(1);
    expect(await settled(service.refreshForUnknownTool())).toBe(true);
  });
});

describe('BundleRefreshService: a round over the kinds of source (SourcePuller)', () => {
  const bundleResult = (bundleId: string): BundlePullResult => ({
    bundleId,
    kind: 'failed',
    errorType: 'ManifestConnectError',
    detail: '',
    attemptedAt: new Date(0),
  });
  const upstreamResult = { upstreamId: 'u1', kind: 'failed' } as unknown as UpstreamPullResult;

  it("pulls every kind's sources at once and applies them in one round, each kind's results as pulled", async () => {
    const started: string[] = [];
    const finish: Array<() => void> = [];
    const puller = (pulls: SourcePulls): SourcePuller => ({
      kind: pulls.kind,
      pullAll: (traced) => {
        expect(traced).toBe(false);
        started.push(pulls.kind);
        return new Promise((resolve) => finish.push(() => resolve(pulls)));
      },
    });
    const applyPulls = jest.fn(() => Promise.resolve());
    const registry = { applyPulls } as unknown as RegistryService;
    const service = new BundleRefreshService(
      registry,
      [
        puller({ kind: 'bundle', results: [bundleResult('a')] }),
        puller({ kind: 'upstream', results: [upstreamResult] }),
        puller({ kind: 'bundle', results: [bundleResult('b')] }),
      ],
      config(0),
    );
    const round = service.refreshNow();
    // every puller started before any finished: the kinds are pulled concurrently
    expect(started).toEqual(['bundle', 'upstream', 'bundle']);
    expect(applyPulls).not.toHaveBeenCalled();
    for (const f of finish) f();
    await round;
    // one round, in the pullers' order; each intake takes its kind (registry.service.spec.ts)
    expect(applyPulls).toHaveBeenCalledTimes(1);
    expect(applyPulls).toHaveBeenCalledWith([
      { kind: 'bundle', results: [bundleResult('a')] },
      { kind: 'upstream', results: [upstreamResult] },
      { kind: 'bundle', results: [bundleResult('b')] },
    ]);
  });

  it('a puller that rejects leaves the catalog unchanged and the round ends (contract §6)', async () => {
    const applyPulls = jest.fn(() => Promise.resolve());
    const service = new BundleRefreshService(
      { applyPulls } as unknown as RegistryService,
      [{ kind: 'bundle', pullAll: () => Promise.reject(new Error('boom')) }],
      config(0),
    );
    await expect(service.refreshNow()).resolves.toBeUndefined();
    expect(applyPulls).not.toHaveBeenCalled();
  });
});
