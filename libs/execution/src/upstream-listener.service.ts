import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ThrottledLines } from '@app/observability';
import { JsonRpcCode } from '@app/wire';
import type { UpstreamDefinition } from '@app/config';
import {
  callerExpired,
  callerExpiresAtMs,
  SourceCredentialError,
  type CallerIdentity,
} from '@app/identity';
import {
  UpstreamConnections,
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamConnection,
} from '@app/upstream';
import type { IncomingHeaders } from './call-tool-result';
import { CallerRequestHeaders } from './caller-request-headers';
import { CallerShares, NO_SHARE, poolOf } from './caller-shares';

/** The `notifications` filter sent on an upstream's `subscriptions/listen` (MCP 2026-07-28). */
export interface UpstreamListenFilter {
  readonly toolsListChanged?: true;
  readonly promptsListChanged?: true;
  readonly resourcesListChanged?: true;
  readonly resourceSubscriptions?: readonly string[];
}

/** What a 2026 upstream says it can deliver on a listen (its server/discover capabilities). */
export interface UpstreamListenSupport {
  readonly toolsListChanged: boolean;
  readonly promptsListChanged: boolean;
  readonly resourcesListChanged: boolean;
  readonly resourceSubscriptions: boolean;
}

/** The caller's side of a held upstream listen. */
export interface UpstreamListenContext {
  /** The agent's HTTP request headers (forwardHeaders and Authorization are read, as for calls). */
  readonly headers: IncomingHeaders;
  /** The authenticated caller: its token is exchanged for a tokenExchange upstream, as for calls. */
  readonly caller?: CallerIdentity;
  /** Aborting ends the listen: its HTTP stream is closed (the 2026 cancel signal). */
  readonly signal: AbortSignal;
  /** Each change notification the upstream sends (its acknowledgement is not given). */
  readonly onNotification: (method: string, params: Readonly<Record<string, unknown>>) => void;
  /**
   * The listen stopped because the caller's token expired (`caller.expiresAt`) before it could
   * be opened or opened again: nothing of the caller's is sent after its `exp`. Not called when
   * `signal` aborted first.
   */
  readonly onCredentialExpired?: () => void;
}

/** How long the gateway waits for an upstream to take its own resources/subscribe or unsubscribe. */
const UNSUBSCRIBE_DEADLINE_MS = 10_000;
/** A listen is one long request: its deadline is the longest a timer allows (~24.8 days), then it is re-opened. */
const LISTEN_DEADLINE_MS = 2 ** 31 - 1;
/** Re-opening a listen that ended while wanted: first and longest wait, in ms. */
const REOPEN_FIRST_MS = 1_000;
const REOPEN_MAX_MS = 30_000;
/** A listen that lived this long resets the re-open backoff, in ms. */
const HEALTHY_LISTEN_MS = 60_000;

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flag(capabilities: Record<string, unknown>, feature: string, key: string): boolean {
  const value = capabilities[feature];
  return isRecord(value) && value[key] === true;
}

/** What a counted line adds when it stands for more than one listen (ThrottledLines). */
function sinceLast(count: number, what: string): string {
  return count > 1
    ? ` (the last of ${count} listens on it ${what} since the previous such line; at most one a minute)`
    : '';
}

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Holds `subscriptions/listen` streams open on 2026 upstreams for the gateway's own listeners
 * (docs/operations.md §11 "Notification streams"; wire notes G-20): one upstream listen per client
 * stream and upstream, over the upstream's shared connection, with the caller's forwarded headers.
 * Its change notifications go to the caller; its list_changed also refreshes the catalog (the
 * connection hands it to the discovery's unsolicited-message listener). Closing = aborting
 * the signal, which closes the HTTP stream.
 */
@Injectable()
export class UpstreamListener {
  private readonly logger = new Logger('Upstream');
  // what an upstream does to the listens held on it costs lines per upstream, not per client
  // stream (ThrottledLines, @app/observability)
  private readonly ends = new ThrottledLines((line) => this.logger.log(line));
  private readonly refusals = new ThrottledLines((line) => this.logger.warn(line));

  constructor(
    private readonly connections: UpstreamConnections,
    private readonly callerHeaders: CallerRequestHeaders,
    /** A listen held for a caller is one of its requests on the upstream (CallerShares). */
    @Optional() @Inject(CallerShares) private readonly shares: CallerShares | null = null,
  ) {}

  /**
   * Every message an upstream sends on the gateway's own session with it that belongs to no
   * call (its 2025 standalone GET stream: list changes, resource updates), with the upstream's
   * id. The listener must not throw.
   */
  onSessionMessage(listener: (upstreamId: string, message: JsonRpcMessage) => void): void {
    this.connections.onUnsolicited(listener);
  }

  /**
   * An upstream's 2025 session with the gateway was replaced by a new one
   * (UpstreamConnections.onSessionRenewed), with the upstream's id: its subscriptions are gone
   * with the old one. The listener must not throw.
   */
  onSessionRenewed(listener: (upstreamId: string) => void): void {
    this.connections.onSessionRenewed(listener);
  }

  /**
   * Subscribes the gateway's new session with a 2025 upstream to the URIs its clients still hold
   * (docs/operations.md §10 "Resource subscriptions"), with the gateway's own credential, one
   * after another, each bounded as `subscribe`. A URI the upstream refuses is counted and the
   * rest go on; a failure to reach it stops here (a session lost again is renewed by the next
   * request, which starts this over). One line at most for all the URIs not subscribed again:
   * their clients get no update of them from it until they subscribe again.
   */
  async resubscribe(upstream: UpstreamDefinition, uris: readonly string[]): Promise<void> {
    let refused = 0;
    let lastCode: number | undefined;
    for (let i = 0; i < uris.length; i++) {
      const connection = this.sessionConnectionOf(upstream);
      if (connection === undefined) return;
      try {
        const answer = await connection.requestAsGateway(
          'resources/subscribe',
          { uri: uris[i] },
          { deadlineMillis: UNSUBSCRIBE_DEADLINE_MS },
        );
        if (answer.kind === 'error') {
          refused++;
          lastCode = answer.code;
        }
      } catch (err) {
        const why = `resources/subscribe failed: ${err instanceof Error ? err.message : 'unknown cause'}`;
        this.notRestored(upstream, uris.length - i + refused, uris.length, why);
        return;
      }
    }
    if (refused > 0)
      this.notRestored(
        upstream,
        refused,
        uris.length,
        `resources/subscribe answered error ${lastCode}`,
      );
  }

  /** Subscriptions a renewed session did not take again: a line per upstream a minute at most. */
  private notRestored(upstream: UpstreamDefinition, left: number, of: number, why: string): void {
    this.ends.note(
      `${upstream.id}\u0000resubscribe`,
      (count) =>
        `Upstream ${upstream.id}: ${left} of ${of} subscription(s) held by clients are not on its new session (${why}); those clients get no update of them from it until they subscribe again` +
        (count > 1 ? ` (the last of ${count} renewals since the previous such line)` : ''),
    );
  }

  /**
   * The connection of the gateway's 2025 session with the upstream (UpstreamConnections.sessionOf:
   * a dual-era upstream's second session included), where its resources/subscribe live;
   * undefined when it has none (it speaks 2026 only) or its registration is gone.
   */
  private sessionConnectionOf(upstream: UpstreamDefinition): UpstreamConnection | undefined {
    let connection: UpstreamConnection;
    try {
      connection = this.connections.sessionOf(upstream);
    } catch (err) {
      if (err instanceof UpstreamFailure) return undefined;
      throw err;
    }
    return connection.era === '2026' ? undefined : connection;
  }

  /**
   * The upstream's connection; undefined for a runtime registration deleted or replaced since
   * `upstream` was read (UpstreamConnections.get: its definition gets none).
   */
  private connectionOf(upstream: UpstreamDefinition): UpstreamConnection | undefined {
    try {
      return this.connections.get(upstream);
    } catch (err) {
      if (err instanceof UpstreamFailure) return undefined;
      throw err;
    }
  }

  /**
   * What this upstream can deliver on a listen; undefined when it is not (yet) known to speak
   * 2026-07-28 (2025 upstreams have no listen; their list changes reach the catalog through
   * their GET stream instead).
   */
  support(upstream: UpstreamDefinition): UpstreamListenSupport | undefined {
    const connection = this.connectionOf(upstream);
    if (connection?.era !== '2026') return undefined;
    const capabilities = connection.serverCapabilities ?? {};
    return {
      toolsListChanged: flag(capabilities, 'tools', 'listChanged'),
      promptsListChanged: flag(capabilities, 'prompts', 'listChanged'),
      resourcesListChanged: flag(capabilities, 'resources', 'listChanged'),
      resourceSubscriptions: flag(capabilities, 'resources', 'subscribe'),
    };
  }

  /**
   * Keeps a listen with this filter open on the upstream until `context.signal` aborts; one
   * that ends otherwise (the upstream closed it, a failure) is re-opened after 1 s, doubling to
   * 30 s. Stops for good when the upstream refuses the method or the filter (-32601, -32602),
   * and when the caller's token has expired: the listen carries the caller's headers, so it is
   * never opened, re-opened or resumed (`Last-Event-ID`) after the token's `exp`
   * (docs/security.md "Answers to relayed requests"), and `onCredentialExpired` says so.
   * Resolves when it stops; never rejects.
   */
  async hold(
    upstream: UpstreamDefinition,
    filter: UpstreamListenFilter,
    context: UpstreamListenContext,
  ): Promise<void> {
    const { signal } = context;
    // a registration deleted or replaced since the listen began: nothing to hold on it
    const connection = this.connectionOf(upstream);
    if (connection === undefined) return;
    let wait = REOPEN_FIRST_MS;
    const expiresAtMs = callerExpiresAtMs(context.caller);
    while (!signal.aborted) {
      // exact `exp`, as for a call's resume and a bridged listen: the clock skew a token is
      // accepted with applies to the caller's own requests, not to what the gateway sends again
      if (callerExpired(context.caller)) {
        context.onCredentialExpired?.();
        return;
      }
      const started = performance.now();
      let ended: string;
      // it holds a connection for as long as it is open: one of the caller's share of them
      const share =
        this.shares === null
          ? NO_SHARE
          : this.shares.take(poolOf('upstream', upstream.url), context.caller);
      try {
        if (share === undefined)
          throw new UpstreamFailure(
            'refused',
            `this caller has ${this.shares?.perCaller ?? 0} requests to it running already, its share (execution.maxConcurrentCallsPerCaller)`,
          );
        const answer = await connection.request(
          'subscriptions/listen',
          { notifications: filter },
          {
            deadlineMillis: LISTEN_DEADLINE_MS,
            signal,
            // asked again at every (re)open: an exchanged token is renewed as it expires
            headers: await this.callerHeaders.for(upstream, context.headers, context.caller),
            // its resume GET and a repeat after the session was renewed: not after `exp`
            credentialExpiresAtMs: expiresAtMs,
            onMessage: (message) => this.deliver(message, context),
            // a stream of notifications for as long as the client listens: each capped, a bad
            // one dropped, never the listen ended for it (docs/operations.md §11)
            notificationStream: true,
          },
        );
        if (
          answer.kind === 'error' &&
          (answer.code === JsonRpcCode.MethodNotFound || answer.code === JsonRpcCode.InvalidParams)
        ) {
          const code = answer.code;
          this.refusals.note(
            upstream.id,
            (count) =>
              `Upstream ${upstream.id}: subscriptions/listen refused (${code}); its notifications are not relayed` +
              sinceLast(count, 'refused'),
          );
          return;
        }
        ended = answer.kind === 'error' ? `error ${answer.code}` : 'closed by the upstream';
      } catch (err) {
        if (signal.aborted) return;
        ended =
          err instanceof UpstreamFailure
            ? err.message
            : err instanceof SourceCredentialError
              ? 'its credential for this caller could not be had'
              : 'failed unexpectedly';
      } finally {
        share?.();
      }
      if (signal.aborted) return;
      // ended after the caller's token expired: stopped now, not after a wait
      if (callerExpired(context.caller)) continue;
      if (performance.now() - started >= HEALTHY_LISTEN_MS) wait = REOPEN_FIRST_MS;
      const reopenMs = wait;
      this.ends.note(
        upstream.id,
        (count) =>
          `Upstream ${upstream.id}: subscriptions/listen ended (${ended}); re-opening in ${reopenMs} ms` +
          sinceLast(count, 'ended'),
      );
      await pause(wait, signal);
      wait = Math.min(wait * 2, REOPEN_MAX_MS);
    }
  }

  /**
   * Tells a 2025 upstream that no client on this replica subscribes to `uri` any more (their
   * subscriptions expired, were dropped elsewhere, or moved to the URI's new owner;
   * docs/operations.md §10 "Resource subscriptions"): `resources/unsubscribe` on the gateway's
   * own session with it, with the gateway's own credential. Best effort: a failure is logged,
   * and the upstream's later updates of the URI are dropped here anyway.
   */
  unsubscribe(upstream: UpstreamDefinition, uri: string): Promise<void> {
    return this.asGateway(upstream, 'resources/unsubscribe', uri, 'no client holds any more');
  }

  /**
   * Subscribes the gateway's own session with a 2025 upstream to `uri` for the clients whose
   * subscriptions moved to it when it became the URI's owner (docs/operations.md §10 "Resource
   * subscriptions"), with the gateway's own credential, as `unsubscribe`. Best effort: a
   * failure is logged, and the clients get no update from it until they subscribe again.
   */
  subscribe(upstream: UpstreamDefinition, uri: string): Promise<void> {
    return this.asGateway(upstream, 'resources/subscribe', uri, 'moved to it');
  }

  private async asGateway(
    upstream: UpstreamDefinition,
    method: 'resources/subscribe' | 'resources/unsubscribe',
    uri: string,
    which: string,
  ): Promise<void> {
    const connection = this.sessionConnectionOf(upstream);
    if (connection === undefined) return;
    try {
      const answer = await connection.requestAsGateway(
        method,
        { uri },
        { deadlineMillis: UNSUBSCRIBE_DEADLINE_MS },
      );
      if (answer.kind === 'error')
        this.subscriptionLine(upstream, method, which, `answered error ${answer.code}`);
    } catch (err) {
      this.subscriptionLine(
        upstream,
        method,
        which,
        `failed (${err instanceof Error ? err.message : 'unknown cause'})`,
      );
    }
  }

  /**
   * A subscribe or unsubscribe of the gateway's own that did not go through: one line per
   * upstream, method and kind of failure a minute at most, however many subscriptions a
   * caller's sessions made it send (docs/operations.md §4 "What outsiders can make the gateway
   * log").
   */
  private subscriptionLine(
    upstream: UpstreamDefinition,
    method: string,
    which: string,
    outcome: string,
  ): void {
    const kind = outcome.startsWith('answered') ? outcome : 'failed';
    this.ends.note(`${upstream.id}\u0000${method}\u0000${which}\u0000${kind}`, (count) =>
      count === 1
        ? `Upstream ${upstream.id}: ${method} of a subscription ${which} ${outcome}`
        : `Upstream ${upstream.id}: ${count} ${method}s of subscriptions ${which} did not go through since the previous such line, the last ${outcome} (at most one line a minute)`,
    );
  }

  private deliver(message: JsonRpcMessage, context: UpstreamListenContext): void {
    const { method } = message;
    // only notifications travel on a listen stream; the acknowledgement is the upstream's own
    if (typeof method !== 'string' || message.id !== undefined || method === ACKNOWLEDGED) return;
    context.onNotification(method, isRecord(message.params) ? message.params : {});
  }
}
