import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  FULL_ACCESS,
  ResourceServer,
  allowsSource,
  type AuthOutcome,
  type CallerAccess,
  type CallerIdentity,
} from '@app/identity';
import { GatewayMetrics, type StreamCloseReason } from '@app/observability';
import { RegistryService, type CatalogSnapshot } from '@app/registry';
import { callerKey } from '../session/caller-key';
import { changedListsFor } from './caller-changes';
import { changedLists, LIST_CHANGED_METHOD, type ListKind } from './catalog-changes';
import { NotificationStream } from './notification-stream';
import { VirtualServers } from '../servers/virtual-servers.service';

/** One open notification stream, whatever its era. */
export interface OpenStream {
  /** Its frames (from `newStream`): a cut (slow consumer) closes the stream. */
  readonly stream: NotificationStream;
  /**
   * What the stream's caller may use (`mcp.access`): it is told of a list change only when its
   * own view of the list changed. Undefined: everything (no `mcp.access`, or auth off).
   */
  readonly access?: CallerAccess;
  /** The 2025 session whose GET stream this is; undefined for a 2026 listen. */
  readonly sessionId?: string;
  /**
   * Whether this stream relays that upstream's own list changes (a 2026 listen holding a
   * listen on it): it is then not told them again after the upstream's pull.
   */
  relaysFrom?(upstreamId: string): boolean;
  /** A list of the published catalog changed (as this stream's caller sees it). */
  listChanged(kind: ListKind): void;
  /** A keep-alive tick: write a comment line. */
  keepAlive(): void;
  /**
   * Ends the stream and releases what it holds (upstream listens). `graceful`: the gateway
   * ends it (shutdown), so a 2026 listen gets its closing result first (wire notes §2.8).
   */
  close(graceful: boolean): void;
}

/** Whether a stream may open: `open`, or which cap is reached. */
export type StreamRoom = 'open' | 'replica_limit' | 'caller_limit';

/** Longest a timer can wait (setTimeout's limit, ~24.8 days); a later expiry is re-armed. */
export const MAX_TIMER_MS = 2_147_483_647;

interface Held {
  /** callerKey of its owner; undefined when auth is off. */
  readonly owner?: string;
  expiry?: NodeJS.Timeout;
  /** The next check of the caller (`mcp.listen.recheckSeconds`). */
  recheck?: NodeJS.Timeout;
}

/** A 2025 GET stream's session and path (a virtual server's, or `/mcp`); undefined for a listen. */
function sessionPathKey(stream: OpenStream): string | undefined {
  if (stream.sessionId === undefined) return undefined;
  return `${stream.sessionId}\u0000${VirtualServers.serverOf(stream.access) ?? ''}`;
}

/** The name of a grant: equal names, equal grants (AccessPolicy keys its unions so). */
function grantName(access: CallerAccess): string {
  return access.all ? '*' : `rules:${access.key}`;
}

/**
 * The notification streams open on this replica (docs/operations.md §11 "Notification streams"):
 * 2026 `subscriptions/listen` streams and 2025 session GET streams. It tells each of them when the
 * published catalog changes (RegistryService.onPublished; every replica refreshes from the same
 * sources and publishes the same bytes, so each notices a change itself), writes the keep-alive
 * comment on all of them every `mcp.listen.keepAliveMillis`, and ends them all when the /mcp
 * listener starts draining. It owns their lifecycle rules
 * (docs/security.md, "Sessions and notification streams"): at most `mcp.listen.maxStreams` in all
 * and, with `mcp.auth` on, `maxStreamsPerCaller` per caller; a stream ends when its caller's token
 * expires; each queues at most `maxQueuedBytes` for a client that does not read (see
 * NotificationStream).
 */
@Injectable()
export class NotificationHub implements OnApplicationShutdown {
  private readonly logger = new Logger('Mcp');
  private readonly streams = new Map<OpenStream, Held>();
  /**
   * Of each 2025 session's GET streams on one path, the one opened last (sessionPathKey): the
   * only one a message of the session goes on (MCP 2025-11-25 transports, "Multiple
   * Connections": the server MUST NOT broadcast one message across a session's streams). The
   * one opened last is the one its client reads; an older one may be a connection it left.
   */
  private readonly lastOfSession = new Map<string, OpenStream>();
  /** Open streams per callerKey. */
  private readonly perCaller = new Map<string, number>();
  private readonly maxStreams: number;
  private readonly maxStreamsPerCaller: number;
  private readonly maxQueuedBytes: number;
  private readonly keepAliveMillis: number;
  /** A token is accepted this long past its exp (mcp.auth.clockSkewSeconds): so is its stream. */
  private readonly skewMs: number;
  private readonly recheckMs: number;
  private keepAliveTimer?: NodeJS.Timeout;
  private draining = false;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly registry: RegistryService,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    /** Rechecks the callers of open streams; without it (unit tests) streams are not rechecked. */
    @Optional()
    @Inject(ResourceServer)
    private readonly resourceServer: ResourceServer | null = null,
    @Optional()
    @Inject(VirtualServers)
    private readonly servers: VirtualServers | null = null,
  ) {
    const listen = config.mcp.listen;
    this.maxStreams = listen.maxStreams;
    this.maxStreamsPerCaller = listen.maxStreamsPerCaller;
    this.maxQueuedBytes = listen.maxQueuedBytes;
    this.keepAliveMillis = listen.keepAliveMillis;
    this.skewMs = config.mcp.auth.clockSkewSeconds * 1000;
    this.recheckMs = listen.recheckSeconds * 1000;
    registry.onPublished((previous, next) => {
      const kinds = changedLists(previous, next);
      if (kinds.length === 0 || this.streams.size === 0) return;
      this.logger.log(
        `Catalog lists changed (${kinds.join(', ')}): notifying ${this.streams.size} stream(s)`,
      );
      for (const stream of [...this.streams.keys()]) {
        if (!this.carries(stream)) continue;
        // a stream on a virtual server's path: its view as each catalog resolves it
        const before = this.servers?.narrowFor(stream.access, previous) ?? stream.access;
        const after = this.servers?.narrowFor(stream.access, next) ?? stream.access;
        for (const kind of changedListsFor(kinds, previous, next, before, after))
          stream.listChanged(kind);
      }
    });
    registry.onUpstreamAnnounced((upstreamId, methods, before, after) =>
      this.announced(upstreamId, methods, before, after),
    );
    // a registered server deleted or replaced: its path is a 404 or another view now, so what
    // was opened there ends (a 2026 listen with its closing result; docs/operations.md §16)
    servers?.onServersGone((gone) => {
      for (const stream of [...this.streams.keys()]) {
        const server = VirtualServers.serverOf(stream.access);
        if (server !== undefined && gone.has(server)) stream.close(true);
      }
    });
  }

  /**
   * An upstream announced list changes and its pull was applied: the lists it named that the
   * catalog did not change (a change already went out with the publication) are told to every
   * stream whose caller's grant has the upstream, unless the stream relays that upstream's own
   * notifications. The upstream said so, and a client that listens expects it (MCP: the server
   * SHOULD notify); the pull's flood limit coalesces a storm before it reaches here.
   */
  private announced(
    upstreamId: string,
    methods: readonly string[],
    before: CatalogSnapshot | undefined,
    after: CatalogSnapshot | undefined,
  ): void {
    if (after === undefined || this.streams.size === 0) return;
    const changed = changedLists(before, after);
    const kinds = (Object.keys(LIST_CHANGED_METHOD) as ListKind[]).filter(
      (kind) => methods.includes(LIST_CHANGED_METHOD[kind]) && !changed.includes(kind),
    );
    if (kinds.length === 0) return;
    for (const stream of [...this.streams.keys()]) {
      if (!this.carries(stream)) continue;
      const access = this.accessOf(stream, after);
      if (access !== undefined && !allowsSource(access, upstreamId)) continue;
      if (stream.relaysFrom?.(upstreamId) === true) continue;
      for (const kind of kinds) stream.listChanged(kind);
    }
  }

  /** Whether a message goes on this stream: a 2026 listen, or its session's stream opened last. */
  private carries(stream: OpenStream): boolean {
    const session = sessionPathKey(stream);
    return session === undefined || this.lastOfSession.get(session) === stream;
  }

  /** Open streams on this replica. */
  get size(): number {
    return this.streams.size;
  }

  /** Whether a stream of this caller (undefined: auth off) may open now; counts a refusal. */
  room(caller: CallerIdentity | undefined): StreamRoom {
    const room = this.roomFor(callerKey(caller));
    if (room !== 'open') this.metrics?.notificationStreamRefused(room);
    return room;
  }

  /** The frames of a new stream, bounded by `maxQueuedBytes` (a cut is counted). */
  newStream(): NotificationStream {
    return new NotificationStream(this.maxQueuedBytes, () =>
      this.metrics?.notificationStreamClosed('slow_consumer'),
    );
  }

  /**
   * Registers an open stream of this caller and returns 'open', or returns the cap that is
   * reached (nothing registered; the refusal is counted). With a caller whose token has an
   * `exp`, the stream is closed (without a closing result) when the token expires; with a
   * caller, the Authorization value that opened the stream is checked again every
   * `mcp.listen.recheckSeconds` (see recheck).
   */
  add(
    stream: OpenStream,
    caller: CallerIdentity | undefined,
    authorization?: string | string[],
    sessionExpiresAtMs?: number,
  ): StreamRoom {
    const owner = callerKey(caller);
    const room = this.roomFor(owner);
    if (room !== 'open') {
      this.metrics?.notificationStreamRefused(room);
      return room;
    }
    const held: Held = { owner };
    this.streams.set(stream, held);
    const session = sessionPathKey(stream);
    if (session !== undefined) this.lastOfSession.set(session, stream);
    // cut for a client that stopped reading: released here, not only when its socket closes
    stream.stream.onCut(() => stream.close(false));
    if (owner !== undefined) this.perCaller.set(owner, (this.perCaller.get(owner) ?? 0) + 1);
    // whichever ends first: the token that opened it, or the 2025 session it belongs to (a
    // sealed id is refused once its expiry passed, so its stream must not outlive it either:
    // docs/security.md "Sessions and notification streams")
    const tokenEndsMs =
      caller?.expiresAt === undefined ? undefined : caller.expiresAt * 1000 + this.skewMs;
    if (
      sessionExpiresAtMs !== undefined &&
      (tokenEndsMs === undefined || sessionExpiresAtMs < tokenEndsMs)
    )
      this.closeAt(stream, held, sessionExpiresAtMs, 'session_expired');
    else if (tokenEndsMs !== undefined) this.closeAt(stream, held, tokenEndsMs, 'token_expired');
    if (caller !== undefined && authorization !== undefined)
      this.recheckLater(stream, held, authorization);
    this.metrics?.notificationStreamsOpen(this.streams.size);
    if (this.keepAliveTimer === undefined) {
      this.keepAliveTimer = setInterval(() => {
        for (const s of this.streams.keys()) s.keepAlive();
      }, this.keepAliveMillis);
      this.keepAliveTimer.unref();
    }
    return 'open';
  }

  /**
   * Writes one message on the GET streams of these 2025 sessions (a resource update they
   * subscribed to, ResourceSubscriptions), each only while its caller's grant (on a virtual
   * server's path: the view as the catalog served now resolves it) has `sourceId`.
   * @returns the sessions among them whose GET stream is on this replica (written to, or not
   *   for its grant): no other replica needs to be told about them
   */
  toSessions(
    sessionIds: ReadonlySet<string>,
    sourceId: string,
    message: string,
  ): ReadonlySet<string> {
    const here = new Set<string>();
    const catalog = this.registry.current();
    for (const stream of this.streams.keys()) {
      if (stream.sessionId === undefined || !sessionIds.has(stream.sessionId)) continue;
      here.add(stream.sessionId);
      if (!this.carries(stream)) continue;
      const access = this.accessOf(stream, catalog);
      if (access !== undefined && !allowsSource(access, sourceId)) continue;
      stream.stream.push(message);
    }
    return here;
  }

  /**
   * What a stream's notifications are checked against: its grant, and on a virtual server's path
   * the server's view as `catalog` resolves it (a tag-based view follows the catalog:
   * docs/operations.md §16), not as it was when the stream opened; narrowFor caches it per
   * catalog.
   */
  private accessOf(
    stream: OpenStream,
    catalog: CatalogSnapshot | undefined,
  ): CallerAccess | undefined {
    return this.servers?.narrowFor(stream.access, catalog) ?? stream.access;
  }

  /**
   * Writes one message on the GET streams of one 2025 session on this replica that are open on
   * one path (`server`: a virtual server's id, undefined: `/mcp`): its own tool selection on that
   * path changed (docs/operations.md §16 "Tool selection", "Per session and path"). A stream of
   * the same session on another path is not told: its list did not change (docs/security.md
   * "Listen filters and list changes").
   * @returns the streams written to
   */
  toSession(sessionId: string, server: string | undefined, message: string): number {
    let written = 0;
    for (const stream of this.streams.keys()) {
      if (stream.sessionId !== sessionId) continue;
      if (VirtualServers.serverOf(stream.access) !== server) continue;
      if (!this.carries(stream)) continue;
      stream.stream.push(message);
      written++;
    }
    return written;
  }

  /**
   * Closes the GET streams of one 2025 session on this replica, without a closing result: its
   * client ended the session (DELETE /mcp, docs/operations.md §9 "Ending a session"), so they
   * are not counted as closed by the gateway on its own.
   * @returns the streams closed
   */
  closeSession(sessionId: string): number {
    let closed = 0;
    for (const stream of [...this.streams.keys()]) {
      if (stream.sessionId !== sessionId) continue;
      stream.close(false);
      closed++;
    }
    return closed;
  }

  /** The 2025 sessions with a GET stream open on this replica. */
  sessionIds(): Set<string> {
    const ids = new Set<string>();
    for (const stream of this.streams.keys())
      if (stream.sessionId !== undefined) ids.add(stream.sessionId);
    return ids;
  }

  /** Forgets a stream (it closed). */
  remove(stream: OpenStream): void {
    const held = this.streams.get(stream);
    if (held === undefined) return;
    this.streams.delete(stream);
    const session = sessionPathKey(stream);
    if (session !== undefined && this.lastOfSession.get(session) === stream) {
      // the session's stream opened last before it, if one is still open, takes its place
      let before: OpenStream | undefined;
      for (const other of this.streams.keys())
        if (sessionPathKey(other) === session) before = other;
      if (before === undefined) this.lastOfSession.delete(session);
      else this.lastOfSession.set(session, before);
    }
    this.metrics?.notificationStreamsOpen(this.streams.size);
    if (held.expiry !== undefined) clearTimeout(held.expiry);
    if (held.recheck !== undefined) clearTimeout(held.recheck);
    if (held.owner !== undefined) {
      const left = (this.perCaller.get(held.owner) ?? 1) - 1;
      if (left <= 0) this.perCaller.delete(held.owner);
      else this.perCaller.set(held.owner, left);
    }
    if (this.streams.size === 0 && this.keepAliveTimer !== undefined) {
      clearInterval(this.keepAliveTimer);
      this.keepAliveTimer = undefined;
    }
  }

  /**
   * Closes a stream as its token's expiry does (without a closing result, counted
   * `token_expired`, or `session_expired` for a GET stream whose session id expired): also
   * before `exp` + `clockSkewSeconds` when what the stream relays can no longer be had without
   * sending the expired token upstream (an upstream listen that would have to be opened again,
   * SubscriptionsListen).
   */
  expire(stream: OpenStream, reason: 'token_expired' | 'session_expired' = 'token_expired'): void {
    if (!this.streams.has(stream)) return;
    this.metrics?.notificationStreamClosed(reason);
    stream.close(false);
  }

  /**
   * The /mcp listener is draining (SIGTERM): every stream is ended gracefully now, not at the
   * end of the grace period, and no new one opens. Clients reconnect to another replica.
   */
  closeAll(): void {
    this.draining = true;
    if (this.streams.size > 0)
      this.logger.log(`Draining: closing ${this.streams.size} notification stream(s)`);
    for (const stream of [...this.streams.keys()]) stream.close(true);
  }

  onApplicationShutdown(): void {
    this.closeAll();
  }

  private roomFor(owner: string | undefined): StreamRoom {
    if (this.draining || this.streams.size >= this.maxStreams) return 'replica_limit';
    if (owner !== undefined && (this.perCaller.get(owner) ?? 0) >= this.maxStreamsPerCaller)
      return 'caller_limit';
    return 'open';
  }

  /**
   * A stream lives no longer than the token that opened it (the token is checked on every
   * request; a stream is one request that lasts), nor than its 2025 session id: at `atMs` it is
   * closed without a closing result, an abrupt end after which the client reconnects with a
   * fresh token (or, its session expired, initializes again and gets 404 until it does).
   */
  private closeAt(
    stream: OpenStream,
    held: Held,
    atMs: number,
    reason: 'token_expired' | 'session_expired',
  ): void {
    const delay = Math.max(0, atMs - Date.now());
    held.expiry = setTimeout(
      () => {
        if (!this.streams.has(stream)) return;
        if (Date.now() < atMs) {
          this.closeAt(stream, held, atMs, reason);
          return;
        }
        this.expire(stream, reason);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    held.expiry.unref();
  }

  /**
   * Arms the next recheck of this stream's caller, `recheckSeconds` after the last one ended
   * (never two in flight for one stream); none when auth is off. The hot request path is not
   * involved: only open streams are rechecked, each on its own timer.
   */
  private recheckLater(stream: OpenStream, held: Held, authorization: string | string[]): void {
    const resourceServer = this.resourceServer;
    if (resourceServer?.enabled !== true) return;
    held.recheck = setTimeout(() => {
      void resourceServer.authenticate(authorization).then((outcome) => {
        if (!this.streams.has(stream)) return;
        const reason = this.recheckVerdict(outcome, stream, held);
        if (reason === undefined) {
          this.recheckLater(stream, held, authorization);
          return;
        }
        this.logger.log(`Closing a notification stream: its caller's recheck found ${reason}`);
        this.metrics?.notificationStreamClosed(reason);
        stream.close(false);
      });
    }, this.recheckMs);
    held.recheck.unref();
  }

  /**
   * A stream lives no longer than the token that opened it, nor than its grant
   * (docs/security.md "Sessions and notification streams"): the token is authenticated again
   * exactly as a request's is (a remembered answer within `introspectionCacheSeconds` too), so
   * a revoked or inactive token (introspection), or one without `exp`, ends its stream within
   * `recheckSeconds`, as a grant that changed does. An authorization server that cannot answer
   * (503) ends nothing: the next recheck tries again, as a client retries a request.
   */
  private recheckVerdict(
    outcome: AuthOutcome,
    stream: OpenStream,
    held: Held,
  ): StreamCloseReason | undefined {
    switch (outcome.kind) {
      case 'anonymous':
        return undefined;
      case 'refused':
        if (outcome.status === 503) return undefined;
        // 403: still a token, but without a scope this resource requires
        return outcome.status === 403 ? 'grant_changed' : 'token_revoked';
      case 'authenticated': {
        if (callerKey(outcome.caller) !== held.owner) return 'grant_changed';
        const fresh = this.resourceServer?.policy.accessFor(outcome.caller) ?? FULL_ACCESS;
        // a stream on a virtual server's path keeps its view (docs/operations.md §16)
        const now = this.servers?.narrow(fresh, VirtualServers.serverOf(stream.access)) ?? fresh;
        return grantName(now) === grantName(stream.access ?? FULL_ACCESS)
          ? undefined
          : 'grant_changed';
      }
    }
  }
}
