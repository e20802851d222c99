import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { PendingCounts } from './pending-counts';
import { RetiredLabels } from './retired-labels';

/** Every way a tools/call ends, as the metrics count it. */
export const TOOL_CALL_OUTCOMES = [
  'success',
  'tool_error',
  'timeout',
  'unreachable',
  'too_large',
  'invalid_answer',
  'busy',
  'cancelled',
  'shutdown',
  /**
   * No credential for the source: its token exchange failed
   * (docs/operations.md §14 "Credentials towards sources").
   */
  'credential_error',
] as const;

/** How a tools/call ended, as the metrics count it. */
export type ToolCallOutcome = (typeof TOOL_CALL_OUTCOMES)[number];

/** The Tool Service's answer to a call: an HTTP status class, or why there was none. */
export type ToolServiceStatusClass =
  | '2xx'
  | '3xx'
  | '4xx'
  | '5xx'
  | 'timeout'
  | 'connect_error'
  | 'too_large'
  | 'invalid_answer'
  | 'busy'
  | 'cancelled'
  | 'shutdown'
  | 'credential_error';

const PREFIX = 'mcp_gateway_';

/**
 * How long the series of a removed upstream or tool stay refused to calls that were in flight
 * when they were dropped: longer than any call may last (execution timeouts are minutes at most).
 */
const RETIRED_KEEP_MS = 10 * 60_000;

/**
 * Why the gateway ended a notification stream (2026 listen or 2025 GET) on its own:
 * `slow_consumer` its client stopped reading and the stream's queue reached
 * `mcp.listen.maxQueuedBytes`; `token_expired` the caller's access token expired;
 * `session_expired` the 2025 session id of a GET stream expired (`mcp.session.ttlSeconds`);
 * `token_revoked` a recheck (`mcp.listen.recheckSeconds`) found the token refused (revoked,
 * inactive); `grant_changed` a recheck found the caller's grant (`mcp.access`) changed.
 */
export type StreamCloseReason =
  'slow_consumer' | 'token_expired' | 'session_expired' | 'token_revoked' | 'grant_changed';

/** Why a notification stream was not opened: `mcp.listen.maxStreams` or `maxStreamsPerCaller`. */
export type StreamRefusalReason = 'replica_limit' | 'caller_limit';

/** A source's status as `mcp_gateway_source_status` exports it. */
export interface SourceStatus {
  readonly kind: 'bundle' | 'upstream';
  readonly source: string;
  readonly status: string;
}

/** Why a merge keeps the previous catalog (contract §7.3 too many tools, §7.6 a name twice). */
const CATALOG_REJECTION_REASONS = ['CatalogTooLargeError', 'ToolNameCollisionError'] as const;

/**
 * The gateway's Prometheus metrics (prom-client), served on GET /actuator/prometheus. Label
 * values are bounded: bundle ids come from config, tool names from the published catalog,
 * outcomes and reasons from fixed sets, never from raw request input.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /** Upstreams and tools whose series were dropped (forgetUpstream, forgetTools). */
  private readonly retiredUpstreams = new RetiredLabels(RETIRED_KEEP_MS);
  private readonly retiredTools = new RetiredLabels(RETIRED_KEEP_MS);
  private readonly pulls: Counter<'bundle' | 'outcome'>;
  private readonly lastSuccess: Gauge<'bundle'>;
  private readonly catalogTools: Gauge;
  private readonly catalogRejections: Counter<'reason'>;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly toolCallSeconds: Histogram<'tool'>;
  private readonly toolServiceResponses: Counter<'bundle' | 'status_class'>;
  private readonly notFound: Counter;
  private readonly argumentsRefused: Counter<'source'>;
  private readonly searchSeconds: Summary;
  private readonly heldForReview: Gauge<'source'>;
  private readonly refreshSeconds: Histogram;
  private readonly upstreamPulls: Counter<'upstream' | 'outcome'>;
  private readonly upstreamCalls: Counter<'upstream' | 'method' | 'outcome'>;
  private readonly upstreamCallSeconds: Histogram<'upstream' | 'method'>;
  private readonly upstreamLiveFailures: Counter<'upstream' | 'method'>;
  private readonly streamsOpen: Gauge;
  private readonly streamsClosed: Counter<'reason'>;
  private readonly streamsRefused: Counter<'reason'>;
  private readonly sessionEndedCalls: Counter<'reason'>;
  private readonly validationWorkerCrashes: Counter<'bundle' | 'then' | 'reason'>;
  private readonly registrationStoreResets: Counter;
  private readonly busMessagesDropped: Counter<'channel'>;
  private readonly upstreamListChanges: Counter<'upstream' | 'outcome'>;
  /** The counters a call adds to, counted here and handed over at each scrape (PendingCounts). */
  private readonly toolCallCounts = new PendingCounts<'tool' | 'outcome'>(['tool', 'outcome']);
  private readonly toolServiceResponseCounts = new PendingCounts<'bundle' | 'status_class'>([
    'bundle',
    'status_class',
  ]);
  private readonly upstreamCallCounts = new PendingCounts<'upstream' | 'method' | 'outcome'>([
    'upstream',
    'method',
    'outcome',
  ]);
  /** Registered on the first report, so a gateway without REDIS_URL exports no redis_up at all. */
  private redisUp?: Gauge;
  /** Read at each scrape: the sources and their statuses as the registry holds them now. */
  private sourceStatuses: () => readonly SourceStatus[] = () => [];

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.pulls = new Counter({
      name: `${PREFIX}manifest_pulls_total`,
      help: 'Manifest pulls by bundle and outcome (success, or the error type that rejected it)',
      labelNames: ['bundle', 'outcome'],
      registers,
    });
    this.lastSuccess = new Gauge({
      name: `${PREFIX}manifest_last_success_timestamp_seconds`,
      help: 'Unix time of the last adopted manifest pull, by bundle',
      labelNames: ['bundle'],
      registers,
    });
    this.catalogTools = new Gauge({
      name: `${PREFIX}catalog_tools`,
      help: 'Tools in the published catalog (0 while none is published)',
      registers,
    });
    this.catalogRejections = new Counter({
      name: `${PREFIX}catalog_rejections_total`,
      help: 'Merges that kept the previous catalog, by reason (contract §7.3, §7.6)',
      labelNames: ['reason'],
      registers,
    });
    // every reason a merge can give is a series from the start, at 0: `increase()` over a
    // series that first appears at 1 misses that first rejection
    for (const reason of CATALOG_REJECTION_REASONS) this.catalogRejections.inc({ reason }, 0);
    this.toolCalls = new Counter({
      name: `${PREFIX}tool_calls_total`,
      help: 'tools/call of bundle tools by tool and outcome (upstream tools: upstream_calls_total)',
      labelNames: ['tool', 'outcome'],
      registers,
      collect: () => this.toolCallCounts.flush(),
    });
    this.toolCallCounts.attach(this.toolCalls);
    this.toolCallSeconds = new Histogram({
      name: `${PREFIX}tool_call_duration_seconds`,
      help: 'Duration of tools/call of bundle tools, by tool',
      labelNames: ['tool'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.toolServiceResponses = new Counter({
      name: `${PREFIX}tool_service_responses_total`,
      help: 'Tool Service answers to tool calls by bundle and HTTP status class (or timeout, connect_error)',
      labelNames: ['bundle', 'status_class'],
      registers,
      collect: () => this.toolServiceResponseCounts.flush(),
    });
    this.toolServiceResponseCounts.attach(this.toolServiceResponses);
    this.notFound = new Counter({
      name: `${PREFIX}tool_not_found_total`,
      help: 'tools/call naming no catalog tool, after the refresh (contract §8)',
      registers,
    });
    this.argumentsRefused = new Counter({
      name: `${PREFIX}tool_arguments_refused_total`,
      help: 'tools/call refused by the gateway before sending: the arguments break the tool\'s inputSchema (docs/operations.md §6 "Argument validation")',
      labelNames: ['source'],
      registers,
    });
    this.searchSeconds = new Summary({
      name: `${PREFIX}tool_search_duration_seconds`,
      help: 'Time gateway__search_tools spends ranking the catalog, in process (docs/operations.md §16 "Tool search"); quantiles over the last 10 minutes',
      percentiles: [0.5, 0.9, 0.99],
      maxAgeSeconds: 600,
      ageBuckets: 5,
      registers,
    });
    this.heldForReview = new Gauge({
      name: `${PREFIX}tools_held_for_review`,
      help: 'Tools of pinned sources withheld until an operator approves their new or changed definition (docs/operations.md §6 "Pinned tool definitions")',
      labelNames: ['source'],
      registers,
    });
    this.refreshSeconds = new Histogram({
      name: `${PREFIX}refresh_round_duration_seconds`,
      help: 'Duration of one refresh round (all bundles pulled and applied)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    });
    this.upstreamPulls = new Counter({
      name: `${PREFIX}upstream_pulls_total`,
      help: 'List pulls of upstream MCP servers by upstream and outcome (success, or the error type)',
      labelNames: ['upstream', 'outcome'],
      registers,
    });
    this.upstreamCalls = new Counter({
      name: `${PREFIX}upstream_calls_total`,
      help: 'Requests routed to upstream MCP servers by upstream, method and outcome',
      labelNames: ['upstream', 'method', 'outcome'],
      registers,
      collect: () => this.upstreamCallCounts.flush(),
    });
    this.upstreamCallCounts.attach(this.upstreamCalls);
    this.upstreamCallSeconds = new Histogram({
      name: `${PREFIX}upstream_call_duration_seconds`,
      help: 'Duration of requests routed to upstream MCP servers, by upstream and method',
      labelNames: ['upstream', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.upstreamLiveFailures = new Counter({
      name: `${PREFIX}upstream_live_failures_total`,
      help: 'Live list fetches of lists: live upstreams skipped from a list (failed, late or colliding), by upstream and method',
      labelNames: ['upstream', 'method'],
      registers,
    });
    this.streamsOpen = new Gauge({
      name: `${PREFIX}notification_streams_open`,
      help: 'Notification streams (2026 listen, 2025 GET) open on this replica',
      registers,
    });
    this.streamsClosed = new Counter({
      name: `${PREFIX}notification_streams_closed_total`,
      help: 'Notification streams (listen, GET) the gateway closed on its own, by reason (slow_consumer, token_expired, session_expired, token_revoked, grant_changed)',
      labelNames: ['reason'],
      registers,
    });
    this.streamsRefused = new Counter({
      name: `${PREFIX}notification_streams_refused_total`,
      help: 'Notification streams (listen, GET) refused for lack of room, by reason (replica_limit, caller_limit)',
      labelNames: ['reason'],
      registers,
    });
    this.sessionEndedCalls = new Counter({
      name: `${PREFIX}session_ended_calls_total`,
      help: 'Calls in flight on this replica ended with their 2025 session, by reason (deleted: its client ended it with DELETE /mcp on any replica; expired: its id expired while the call waited for the client to answer a request put to it)',
      labelNames: ['reason'],
      registers,
    });
    this.validationWorkerCrashes = new Counter({
      name: `${PREFIX}manifest_validation_worker_crashes_total`,
      help: 'Manifest validation worker threads that died or were terminated at their deadline before answering, by bundle, what was done next (retry in a new worker, or main-thread validation in slices) and reason (crash, timeout)',
      labelNames: ['bundle', 'then', 'reason'],
      registers,
    });
    this.registrationStoreResets = new Counter({
      name: `${PREFIX}registration_store_resets_total`,
      help: 'Times this replica found the registration store (Redis) reset: its marker gone or replaced; the registrations applied were kept and written back',
      registers,
    });
    this.busMessagesDropped = new Counter({
      name: `${PREFIX}bus_messages_dropped_total`,
      help: "Messages on the replicas' Redis channels (resource_updates, handoff) that did not open: not sealed with MCP_SESSION_KEYS for this identity, expired, malformed or too long (another gateway sharing the key prefix, an older version, a hostile publisher)",
      labelNames: ['channel'],
      registers,
    });
    const sources = (): readonly SourceStatus[] => this.sourceStatuses();
    new Gauge({
      name: `${PREFIX}source_status`,
      help: '1 for each source (kind bundle or upstream, its id) in its current status (healthy, fallback, degraded, unreachable, disabled; GET /actuator/toolBundles and /actuator/upstreams), read at each scrape',
      labelNames: ['kind', 'source', 'status'],
      registers,
      collect() {
        this.reset();
        for (const { kind, source, status } of sources()) this.set({ kind, source, status }, 1);
      },
    });
    this.upstreamListChanges = new Counter({
      name: `${PREFIX}upstream_list_changed_total`,
      help: "list_changed notifications of upstreams, by upstream and outcome (refreshed: started a burst and its pull; coalesced: into the burst's next pull)",
      labelNames: ['upstream', 'outcome'],
      registers,
    });
  }

  /** How many notification streams are open now. */
  notificationStreamsOpen(count: number): void {
    this.streamsOpen.set(count);
  }

  /** The gateway closed a notification stream on its own. */
  notificationStreamClosed(reason: StreamCloseReason): void {
    this.streamsClosed.inc({ reason });
  }

  /** A notification stream was refused: the replica's or the caller's cap is reached. */
  notificationStreamRefused(reason: StreamRefusalReason): void {
    this.streamsRefused.inc({ reason });
  }

  /**
   * `count` calls in flight here were ended with their 2025 session: `deleted` by its client
   * (DELETE /mcp), or `expired` while they waited for its client's answer.
   */
  sessionCallsEnded(reason: 'deleted' | 'expired', count = 1): void {
    if (count > 0) this.sessionEndedCalls.inc({ reason }, count);
  }

  /**
   * A manifest validation worker died before it answered (out of memory, killed, a crash):
   * `then` is `retry` (validated again in a new worker at once) or `main-thread` (validated
   * on the event loop in time slices, after the retry died too); `reason` is `crash` (it died
   * on its own) or `timeout` (terminated at its deadline).
   */
  validationWorkerCrash(
    bundle: string,
    then: 'retry' | 'main-thread',
    reason: 'crash' | 'timeout',
  ): void {
    this.validationWorkerCrashes.inc({ bundle, then, reason });
  }

  /** The registration store lost its data (operations §15 "Shared and durable"). */
  registrationStoreReset(): void {
    this.registrationStoreResets.inc();
  }

  /** A message on a replicas' channel did not open (its WARN line is written once a minute). */
  busMessageDropped(channel: 'resource_updates' | 'handoff'): void {
    this.busMessagesDropped.inc({ channel });
  }

  /** `upstream` is a configured or registered id; `outcome` 'refreshed' or 'coalesced'. */
  upstreamListChanged(upstream: string, outcome: 'refreshed' | 'coalesced'): void {
    if (this.retiredUpstreams.dropped(upstream)) return;
    this.upstreamListChanges.inc({ upstream, outcome });
  }

  /**
   * A `lists: live` upstream skipped from a list (failed, missed its deadline, or a name
   * collision): `upstream` is its configured id, `method` e.g. tools/list
   * (docs/operations.md §11 "Live lists").
   */
  upstreamLiveFailure(upstream: string, method: string): void {
    if (this.retiredUpstreams.dropped(upstream)) return;
    this.upstreamLiveFailures.inc({ upstream, method });
  }

  /** `upstream` is a configured id; `outcome` 'success' or an UpstreamPullErrorType. */
  upstreamPull(upstream: string, outcome: string): void {
    if (this.retiredUpstreams.dropped(upstream)) return;
    this.upstreamPulls.inc({ upstream, outcome });
  }

  /**
   * A request routed to an upstream. `method` is one of the routed MCP methods, `outcome` one
   * of success, error (a JSON-RPC error), tool_error (isError), or an upstream failure kind.
   */
  upstreamCall(upstream: string, method: string, outcome: string, seconds: number): void {
    // a call in flight when its upstream was removed (forgetUpstream) leaves no series behind
    if (this.retiredUpstreams.dropped(upstream, seconds)) return;
    this.upstreamCallCounts.add([upstream, method, outcome]);
    this.upstreamCallSeconds.observe({ upstream, method }, seconds);
  }

  manifestPull(bundle: string, outcome: string, at?: Date): void {
    this.pulls.inc({ bundle, outcome });
    if (outcome === 'success' && at !== undefined)
      this.lastSuccess.set({ bundle }, at.getTime() / 1000);
  }

  catalogPublished(toolCount: number): void {
    this.catalogTools.set(toolCount);
  }

  catalogRejected(reason: string): void {
    this.catalogRejections.inc({ reason });
  }

  /** `tool` must be a published catalog name. */
  toolCall(
    tool: string,
    bundle: string,
    outcome: ToolCallOutcome,
    statusClass: ToolServiceStatusClass,
    seconds: number,
  ): void {
    this.toolServiceResponseCounts.add([bundle, statusClass]);
    // a call in flight when its tool left the catalog (forgetTools) leaves no series behind
    if (this.retiredTools.dropped(tool, seconds)) return;
    this.toolCallCounts.add([tool, outcome]);
    this.toolCallSeconds.observe({ tool }, seconds);
  }

  /**
   * Drops every series labelled with these tool names (calls by outcome, the duration
   * histogram): a tool that left the catalog must not keep ~17 series per name for the life
   * of the process, or tools whose names carry a version grow the scrape without end.
   */
  forgetTools(names: readonly string[]): void {
    if (names.length === 0) return;
    this.retiredTools.retire(names);
    for (const tool of names) {
      this.toolCallCounts.forget(tool);
      for (const outcome of TOOL_CALL_OUTCOMES) this.toolCalls.remove({ tool, outcome });
      this.toolCallSeconds.remove({ tool });
    }
  }

  /**
   * Drops every series labelled with this upstream (pulls, calls, their durations, live-list
   * failures, list changes, refused arguments): an upstream removed at runtime must not stay in
   * the scrape.
   */
  async forgetUpstream(upstream: string): Promise<void> {
    this.retiredUpstreams.retire([upstream]);
    this.upstreamCallCounts.forget(upstream);
    const metrics: readonly (Counter<string> | Histogram<string>)[] = [
      this.upstreamPulls,
      this.upstreamCalls,
      this.upstreamCallSeconds,
      this.upstreamLiveFailures,
      this.upstreamListChanges,
    ];
    for (const metric of metrics) {
      const seen = new Map<string, Record<string, string | number>>();
      for (const { labels } of (await metric.get()).values) {
        if (labels.upstream !== upstream) continue;
        // a histogram's bucket values carry `le` besides the metric's own labels
        const own = Object.fromEntries(
          Object.entries(labels).filter(([name, value]) => name !== 'le' && value !== undefined),
        ) as Record<string, string | number>;
        seen.set(JSON.stringify(own), own);
      }
      for (const labels of seen.values()) metric.remove(labels);
    }
    this.argumentsRefused.remove({ source: upstream });
  }

  /** An upstream id in use again (registered anew after a removal): its series are kept again. */
  rememberUpstream(upstream: string): void {
    this.retiredUpstreams.revive(upstream);
  }

  toolNotFound(): void {
    this.notFound.inc();
  }

  /** Tools held for review now, per pinned source (sources with none leave the scrape). */
  toolsHeldForReview(bySource: ReadonlyMap<string, number>): void {
    this.heldForReview.reset();
    for (const [source, count] of bySource) this.heldForReview.set({ source }, count);
  }

  /** One search of the tool index, in seconds. */
  toolSearched(seconds: number): void {
    this.searchSeconds.observe(seconds);
  }

  /** A call refused for its arguments (`source`: the bundle or upstream id). */
  toolArgumentsRefused(source: string): void {
    if (this.retiredUpstreams.dropped(source)) return;
    this.argumentsRefused.inc({ source });
  }

  /**
   * Where `mcp_gateway_source_status` reads the sources at each scrape (the registry, which
   * owns their statuses); a removed source leaves the scrape with the next one.
   */
  readSourceStatusesFrom(read: () => readonly SourceStatus[]): void {
    this.sourceStatuses = read;
  }

  refreshRound(seconds: number): void {
    this.refreshSeconds.observe(seconds);
  }

  redisAvailable(up: boolean): void {
    this.redisUp ??= new Gauge({
      name: `${PREFIX}redis_up`,
      help: '1 while the Redis last-good store answers, 0 while it does not (absent without REDIS_URL)',
      registers: [this.registry],
    });
    this.redisUp.set(up ? 1 : 0);
  }

  /** The Prometheus text exposition. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
