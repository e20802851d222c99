import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayMetrics, ThrottledLines } from '@app/observability';
import { RegistryService, type CatalogSnapshot } from '@app/registry';
import { UpstreamConnections } from '@app/upstream';
import { UpstreamListPuller } from './upstream-list-puller.service';

/** Upstream notifications that say one of its lists changed (MCP schema, both eras). */
const LIST_CHANGED: ReadonlySet<string> = new Set([
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
]);

/** The refresh state of one upstream that announced a change. */
interface UpstreamChanges {
  /** The pull (and its publication) in flight, if any. */
  pulling?: Promise<void>;
  /** The timer of the coalesced pull the flood limit delays, if armed. */
  timer?: NodeJS.Timeout;
  /** A notification arrived after the last pull started: one more pull is owed. */
  pending: boolean;
  /** performance.now() when the last pull of it started. */
  lastPullStartedAt: number;
  /** The list_changed methods announced since the last pull started. */
  readonly announced: Set<string>;
  /**
   * The catalog when the first of `announced` arrived: a change published since then (by a
   * pull in flight when it came) was already told to clients, so the announcement is not
   * told again (RegistryService.upstreamAnnounced).
   */
  announcedBefore?: CatalogSnapshot;
}

/**
 * Refreshes an upstream that says its lists changed (`notifications/{tools,resources,
 * prompts}/list_changed`, on its GET stream, a call's SSE answer or a 2026 listen;
 * docs/operations.md §10): only that upstream is pulled, never the bundles or the other
 * upstreams, and its new lists are published alone (RegistryService.applyUpstreamPull).
 *
 * A flood limit per upstream, like the unknown-tool one (contract §8): the first notification
 * of a burst pulls at once (clients wait for the catalog's own list_changed that follows),
 * later ones are coalesced into one more pull, started when the pull in flight is done and no
 * sooner than `registry.listChangedRefreshMinIntervalMillis` after the previous one started.
 * Delayed, never dropped: a notification that arrives during a pull always gets a pull that
 * started after it, so the state after the burst is the one published. One log line per burst,
 * at most one a minute per upstream (the later ones counted into it).
 */
@Injectable()
export class ListChangedRefresh implements OnApplicationShutdown {
  private readonly logger = new Logger('Discovery');
  /**
   * The bursts' lines, per upstream: the first at once, then at most one a minute (the upstream
   * decides how often it bursts; docs/operations.md §4 "What outsiders can make the gateway
   * log"). `mcp_gateway_upstream_list_changes_total` counts every notification.
   */
  private readonly burstLines = new ThrottledLines((line) => this.logger.log(line));
  private readonly states = new Map<string, UpstreamChanges>();
  private readonly minIntervalMs: number;
  private stopped = false;

  constructor(
    private readonly registry: RegistryService,
    private readonly puller: UpstreamListPuller,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(UpstreamConnections) connections: UpstreamConnections | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.minIntervalMs = config.mcp.registry.listChangedRefreshMinIntervalMillis;
    connections?.onUnsolicited((upstreamId, message) => {
      if (typeof message.method === 'string' && LIST_CHANGED.has(message.method))
        this.changed(upstreamId, message.method);
    });
  }

  /**
   * One list_changed of an upstream: pulls it now, or owes it one more pull (coalesced).
   * Resolves at once; the pull runs on its own.
   */
  changed(upstreamId: string, method: string): void {
    if (this.stopped) return;
    let state = this.states.get(upstreamId);
    const idle =
      state === undefined ||
      (state.pulling === undefined &&
        state.timer === undefined &&
        !state.pending &&
        performance.now() - state.lastPullStartedAt >= this.minIntervalMs);
    if (state === undefined) {
      state = {
        pending: false,
        lastPullStartedAt: Number.NEGATIVE_INFINITY,
        announced: new Set(),
      };
      this.states.set(upstreamId, state);
    }
    if (idle) {
      // A burst starts: its line (the notifications it coalesces are counted, not logged).
      const interval = this.minIntervalMs;
      this.burstLines.note(upstreamId, (count) =>
        count === 1
          ? `Upstream ${upstreamId}: ${method}; refreshing it (more list_changed within ${interval} ms are coalesced)`
          : `Upstream ${upstreamId}: ${count} bursts of list_changed since the last line, the last ${method}; refreshing it each time (more list_changed within ${interval} ms are coalesced)`,
      );
    }
    this.metrics?.upstreamListChanged(upstreamId, idle ? 'refreshed' : 'coalesced');
    if (state.announced.size === 0) state.announcedBefore = this.registry.current();
    state.announced.add(method);
    state.pending = true;
    this.schedule(upstreamId, state);
  }

  /** Stops refreshing: owed pulls are forgotten, a pull in flight finishes on its own. */
  onApplicationShutdown(): void {
    this.stopped = true;
    for (const state of this.states.values()) {
      clearTimeout(state.timer);
      state.timer = undefined;
    }
  }

  /** Starts the owed pull now, or arms one timer for when the flood limit allows it. */
  private schedule(upstreamId: string, state: UpstreamChanges): void {
    if (!state.pending || state.pulling !== undefined || state.timer !== undefined) return;
    if (this.stopped) return;
    const waitMs = state.lastPullStartedAt + this.minIntervalMs - performance.now();
    if (waitMs <= 0) {
      this.pull(upstreamId, state);
      return;
    }
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.schedule(upstreamId, state);
    }, waitMs);
  }

  private pull(upstreamId: string, state: UpstreamChanges): void {
    state.pending = false;
    state.lastPullStartedAt = performance.now();
    // The definition of this moment: a removed upstream is not pulled, a replaced one is the new one.
    const upstream = this.registry.enabledUpstreams().find((u) => u.id === upstreamId);
    if (upstream === undefined) {
      this.states.delete(upstreamId);
      return;
    }
    const announced = [...state.announced];
    const before = state.announcedBefore;
    state.announced.clear();
    state.announcedBefore = undefined;
    state.pulling = (async () => {
      try {
        await this.registry.applyUpstreamPull(await this.puller.pull(upstream));
        this.registry.upstreamAnnounced(upstreamId, announced, before);
      } catch (err) {
        this.logger.error(
          `Upstream ${upstreamId}: refresh after list_changed failed unexpectedly ` +
            `(${err instanceof Error ? err.name : typeof err}); the catalog is unchanged`,
        );
      } finally {
        state.pulling = undefined;
        this.schedule(upstreamId, state);
      }
    })();
  }
}
