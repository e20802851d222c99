import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { ThrottledLines } from '@app/observability';
import {
  GATEWAY_CONFIG,
  sameUpstream,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import { UpstreamListener, type IncomingHeaders } from '@app/execution';
import { allowsSource, ResourceServer, type AuthOutcome, type CallerIdentity } from '@app/identity';
import { RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { callerKey } from '../session/caller-key';
import { MAX_TIMER_MS, NotificationHub } from './notification-hub.service';
import { UpdateCoalescer } from './update-coalescer';
import { RESOURCE_UPDATED, smallMetaText } from './update-params';
import {
  RESOURCE_UPDATE_BUS,
  type ResourceBusMessage,
  type ResourceUpdateBus,
} from './resource-update-bus';

/** Subscriptions one 2025 session may hold on this replica, and all sessions together. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 100;
export const MAX_SUBSCRIPTIONS = 10_000;
/** How often expired sessions' subscriptions are dropped. */
const SWEEP_EVERY_MS = 60_000;
/**
 * The longest URI a session may subscribe to, and an update is relayed for: subscriptions are
 * counted, not weighed, so their URIs are bounded (resource-subscription.handler.ts).
 */
export const MAX_URI_LENGTH = 8192;

/**
 * The notification a client gets for an upstream's update of `uri`: the URI, and the
 * upstream's `_meta` when it is small. Nothing else of what the upstream sent is passed on
 * (MCP 2025-11-25 `ResourceUpdatedNotification` has no other member), so an upstream cannot
 * make each relayed copy megabytes long.
 */
function updateMessage(uri: string, meta: unknown): string {
  const metaText = smallMetaText(meta);
  const params =
    metaText !== undefined
      ? `{"uri":${JSON.stringify(uri)},"_meta":${metaText}}`
      : `{"uri":${JSON.stringify(uri)}}`;
  return `{"jsonrpc":"2.0","method":"${RESOURCE_UPDATED}","params":${params}}`;
}
/** Upstream listens one replica holds for bridged subscriptions (one per session and upstream). */
export const MAX_BRIDGED_LISTENS = 1000;
/**
 * What one caller may hold of a replica's subscriptions and bridged listens, with `mcp.auth`
 * on: a tenth of each, so that no caller can lock the others out (docs/security.md, "Streams
 * and subscriptions"); without auth there is one caller, and only the totals apply.
 */
export const MAX_SUBSCRIPTIONS_PER_CALLER = MAX_SUBSCRIPTIONS / 10;
export const MAX_BRIDGED_LISTENS_PER_CALLER = MAX_BRIDGED_LISTENS / 10;

/** Who subscribes, for a bridged subscription's upstream listen (as for the session's calls). */
export interface SubscribingCaller {
  readonly headers: IncomingHeaders;
  readonly caller?: CallerIdentity;
}

/** One upstream listen held for a session's bridged subscriptions to one upstream. */
interface BridgedListen {
  readonly upstream: UpstreamDefinition;
  /** callerKey of the caller that opened it; undefined without auth. */
  readonly owner?: string;
  /**
   * The credential it is open with: of its live subscriptions, the one whose own credential
   * expires last (ResourceSubscriptions.credentialFor), so none of them stops with a shorter one.
   */
  who: SubscribingCaller;
  readonly uris: Set<string>;
  end: AbortController;
  /** Ends the upstream listen when the caller's token expires. */
  expiry?: NodeJS.Timeout;
  /** The caller's token expired: no listen is open until a subscribe brings a fresh one. */
  expired?: boolean;
  /** The next check of the caller's credential (`mcp.listen.recheckSeconds`). */
  recheck?: NodeJS.Timeout;
  /**
   * Narrows the listen when the first of its subscriptions ends: each ends with its own
   * subscribing token, while the listen carries the latest subscribe's credential for them all.
   */
  narrowing?: NodeJS.Timeout;
}

interface Subscription {
  /**
   * The upstream it is bound to: the URI's owner, followed when the owner changes
   * (docs/operations.md §10 "Resource subscriptions"); whom its unsubscribe goes to, and whose
   * updates of the URI reach the session.
   */
  upstream: UpstreamDefinition;
  readonly uri: string;
  /**
   * When it ends, in ms: the session id's `exp`, or the subscribing token's expiry when that
   * comes first. A subscribe of the same URI with a fresh token moves it (never past the
   * session's); a subscribe of another URI does not: each subscription lasts as long as the
   * credential it was made with.
   */
  expiresAtMs: number;
  /**
   * The credential that end is the one of (the subscribe whose end is the latest), kept as the
   * relay sends it upstream (keptHeaders): what a bridged listen that carries this URI may be
   * opened with while it lasts, never after.
   */
  who: SubscribingCaller;
}

interface SessionSubscriptions {
  /** callerKey of the session's caller; undefined without auth. */
  readonly owner?: string;
  /** By URI: a session holds one subscription per URI, whatever upstream it is bound to. */
  readonly entries: Map<string, Subscription>;
  /**
   * The latest subscribing request's headers and caller: what a subscription that moves to a
   * 2026 owner is bridged with, as a subscribe there would have been.
   */
  who: SubscribingCaller;
  /**
   * Per upstream id, the credential its subscriptions kept last (Subscription.who): a subscribe
   * with the same token and headers shares it, so a session's many subscriptions made with one
   * token hold one copy of it, not one each (keptFor).
   */
  readonly kept: Map<string, SubscribingCaller>;
}

/** Whether two subscribing requests carry the same credential (its token and its expiry). */
function sameCredential(a: SubscribingCaller, b: SubscribingCaller): boolean {
  return (
    a.caller?.expiresAt === b.caller?.expiresAt &&
    a.headers.authorization === b.headers.authorization
  );
}

/**
 * What a subscription keeps of its subscribing request's headers: those the relay sends
 * `upstream` from it (its `forwardHeaders`; Authorization goes by its authorization mode,
 * CallerRequestHeaders) and the Authorization value, which the bridged listen's recheck
 * authenticates again (ResourceSubscriptions.recheckLater). Not the whole request's headers:
 * a replica keeps up to MAX_SUBSCRIPTIONS of these.
 */
function keptHeaders(upstream: UpstreamDefinition, headers: IncomingHeaders): IncomingHeaders {
  const kept: Record<string, string | string[]> = {};
  for (const name of ['authorization', ...upstream.forwardHeaders]) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** Whether two kept header sets hold the same names and values. */
function sameHeaders(a: IncomingHeaders, b: IncomingHeaders): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((name) => {
    const x = a[name];
    const y = b[name];
    if (Array.isArray(x) && Array.isArray(y))
      return x.length === y.length && x.every((v, i) => v === y[i]);
    return x === y;
  });
}

/**
 * What a subscription of `session` to a URI of `upstream` keeps of its subscribing request
 * (keptHeaders): the session's last kept credential for that upstream when it is the same one,
 * else a new one, kept as the last.
 */
function keptFor(
  session: SessionSubscriptions,
  upstream: UpstreamDefinition,
  headers: IncomingHeaders,
  caller: SubscribingCaller['caller'],
): SubscribingCaller {
  const fresh: SubscribingCaller = { headers: keptHeaders(upstream, headers), caller };
  const last = session.kept.get(upstream.id);
  if (last !== undefined && sameCredential(last, fresh) && sameHeaders(last.headers, fresh.headers))
    return last;
  session.kept.set(upstream.id, fresh);
  return fresh;
}

/** Stops a bridged listen's expiry, recheck and narrowing timers. */
function stopTimers(held: BridgedListen): void {
  if (held.expiry !== undefined) clearTimeout(held.expiry);
  if (held.recheck !== undefined) clearTimeout(held.recheck);
  if (held.narrowing !== undefined) clearTimeout(held.narrowing);
  held.expiry = undefined;
  held.recheck = undefined;
  held.narrowing = undefined;
}

/** Adds `by` to a per-caller count, forgetting a caller whose count is back to 0. */
function count(counts: Map<string, number>, owner: string, by: number): void {
  const next = (counts.get(owner) ?? 0) + by;
  if (next > 0) counts.set(owner, next);
  else counts.delete(owner);
}

function keyOf(upstreamId: string, uri: string): string {
  return `${upstreamId}\u0000${uri}`;
}

function bridgeKey(sessionId: string, upstreamId: string): string {
  return `${sessionId}\u0000${upstreamId}`;
}

/**
 * The resource subscriptions of 2025 sessions on this replica (docs/operations.md §10
 * "Resource subscriptions"). `resources/subscribe` is forwarded to the URI's owner on the
 * gateway's one session with that upstream, so the upstream's `notifications/resources/updated`
 * arrive on that session's standalone GET stream; they are relayed to the GET streams of the
 * client sessions subscribed to that URI here, each within its caller's grant, and only while
 * that upstream owns the URI (docs/security.md "Routing of resource URIs"). When a catalog
 * change gives a subscribed URI another owner, the subscriptions move with it: the old owner
 * is told `resources/unsubscribe` (or its bridged listen narrowed), the new one subscribed (or
 * bridged). An upstream is
 * told `resources/unsubscribe` only when no other session on this replica still subscribes to
 * the URI (one upstream session serves them all). Bounded: at most
 * MAX_SUBSCRIPTIONS_PER_SESSION per session and MAX_SUBSCRIPTIONS in all; a session's
 * subscriptions end with its id's expiry. With Redis (RESOURCE_UPDATE_BUS) an update is also
 * written to the session's GET stream on any other replica, and an unsubscribe received by
 * another replica ends the relay here.
 */
@Injectable()
export class ResourceSubscriptions implements OnApplicationShutdown {
  private readonly bySession = new Map<string, SessionSubscriptions>();
  /** Sessions subscribed, per URI (each bound to its upstream: Subscription.upstream). */
  private readonly subscribers = new Map<string, Set<string>>();
  /** Bridged subscriptions' upstream listens, by session and upstream (bridgeKey). */
  private readonly bridged = new Map<string, BridgedListen>();
  /** Subscriptions and bridged listens per callerKey (with auth). */
  private readonly perCaller = new Map<string, number>();
  private readonly bridgedPerCaller = new Map<string, number>();
  private total = 0;
  private sweeper?: NodeJS.Timeout;
  /** Bursts of one resource's updates, coalesced (UpdateCoalescer). */
  private readonly coalescer = new UpdateCoalescer();

  private readonly logger = new Logger('Listen');
  /** Moves that could not be bridged, logged per upstream (ThrottledLines). */
  private readonly notBridged = new ThrottledLines((line) => this.logger.log(line));
  private readonly recheckMs: number;

  constructor(
    private readonly hub: NotificationHub,
    private readonly listener: UpstreamListener,
    @Optional()
    @Inject(RESOURCE_UPDATE_BUS)
    private readonly bus: ResourceUpdateBus | null = null,
    @Optional() @Inject(GATEWAY_CONFIG) config: GatewayConfig | null = null,
    /** Rechecks bridged listens' callers; without it (unit tests) they are not rechecked. */
    @Optional()
    @Inject(ResourceServer)
    private readonly resourceServer: ResourceServer | null = null,
    /** Whose URI is whose; without it (unit tests) subscriptions keep the upstream they were made on. */
    @Optional()
    @Inject(RegistryService)
    private readonly registry: RegistryService | null = null,
  ) {
    this.recheckMs = (config?.mcp.listen.recheckSeconds ?? 60) * 1000;
    listener.onSessionMessage((upstreamId, message) => this.updated(upstreamId, message));
    listener.onSessionRenewed((upstreamId) => this.renewed(upstreamId));
    bus?.onMessage((message) => this.fromBus(message));
    registry?.onRoundApplied(() => this.followOwners());
  }

  /**
   * Whether `upstreamId` owns `uri` in this replica's catalog: only the owner's updates of a
   * URI are relayed (docs/security.md "Routing of resource URIs"). Without a catalog (unit
   * tests) the subscription's binding alone decides.
   */
  private owns(upstreamId: string, uri: string): boolean {
    const extras = this.registry?.current()?.extras;
    return extras === undefined || extras.resourceOwner(uri)?.id === upstreamId;
  }

  /**
   * After every round (docs/operations.md §10 "Resource subscriptions"): a subscribed URI whose
   * owner changed takes its subscriptions along. Each is rebound to the new owner; the old one
   * is told `resources/unsubscribe` once no session here is bound to it for the URI (its bridged
   * listen narrowed instead), and the new one is subscribed once on the gateway's session, or a
   * bridged listen opened for each session when it speaks 2026. A URI nobody owns now keeps
   * its binding (and gets no update until someone owns it).
   */
  private followOwners(): void {
    this.endRetiredBridges();
    const extras = this.registry?.current()?.extras;
    if (extras === undefined) return;
    // a subscription that has ended moves nowhere: bridged to a 2026 owner it would be listened
    // for with the session's latest credential, past its own token's expiry
    this.sweep(Date.now());
    for (const [uri, sessions] of this.subscribers) {
      const owner = extras.resourceOwner(uri);
      if (owner === undefined) continue;
      let subscribeOwner = false;
      for (const sessionId of [...sessions]) {
        const session = this.bySession.get(sessionId);
        const entry = session?.entries.get(uri);
        if (session === undefined || entry === undefined || sameUpstream(entry.upstream, owner))
          continue;
        if (this.rebind(sessionId, session, entry, owner)) subscribeOwner = true;
      }
      if (subscribeOwner) void this.listener.subscribe(owner, uri);
    }
  }

  /**
   * The gateway's session with a 2025 upstream was replaced (it lost the old one; a 404
   * re-initialized it): the upstream forgot the subscriptions the old one held, while the
   * clients here still hold theirs. Each URI bound to that upstream here (not bridged: a 2026
   * listen is its own) is subscribed on the new session once, with the gateway's own
   * credential, as a subscription that moves to it is (docs/operations.md §10 "Resource
   * subscriptions"). Subscriptions that have ended are dropped first, not subscribed again.
   */
  private renewed(upstreamId: string): void {
    this.sweep(Date.now());
    let upstream: UpstreamDefinition | undefined;
    const uris: string[] = [];
    for (const [uri, sessions] of this.subscribers)
      for (const sessionId of sessions) {
        const entry = this.bySession.get(sessionId)?.entries.get(uri);
        if (entry === undefined || entry.upstream.id !== upstreamId) continue;
        if (this.bridged.get(bridgeKey(sessionId, upstreamId))?.uris.has(uri) === true) continue;
        upstream ??= entry.upstream;
        uris.push(uri);
        break;
      }
    if (upstream !== undefined) void this.listener.resubscribe(upstream, uris);
  }

  /**
   * Moves one session's subscription to `to`, ending it at its old upstream when no other
   * session here is bound there; true when `to` is to be subscribed on the gateway's session
   * (it is no 2026 upstream the subscription can be bridged to).
   */
  private rebind(
    sessionId: string,
    session: SessionSubscriptions,
    entry: Subscription,
    to: UpstreamDefinition,
  ): boolean {
    const from = entry.upstream;
    const bridged = this.unbridge(sessionId, from.id, entry.uri);
    entry.upstream = to;
    if (!bridged && !this.boundElsewhere(sessionId, from.id, entry.uri))
      void this.listener.unsubscribe(from, entry.uri);
    // its own credential goes along, with what the new owner is sent of the request's headers
    // (the session's latest full headers when they carry that credential)
    const source = sameCredential(session.who, entry.who) ? session.who : entry.who;
    entry.who = keptFor(session, to, source.headers, source.caller);
    if (!this.canBridge(to)) return true;
    // a bridged listen carries the caller's credential: never to an upstream outside its grant
    if (!this.mayUse(entry.who, to)) return false;
    try {
      this.bridge(sessionId, to, entry.uri, entry.who);
    } catch (err) {
      // an upstream that lists a URI at one pull and not at the next moves every session's
      // subscription at each round: a line per upstream and minute, not per session and round
      const why = err instanceof Error ? err.message : 'unknown cause';
      this.notBridged.note(
        to.id,
        (count) =>
          `A resource subscription that moved to upstream ${to.id} is not bridged: ${why}` +
          (count > 1
            ? ` (the last of ${count} since the previous such line; at most one a minute)`
            : ''),
      );
    }
    return false;
  }

  /** Whether the caller may use `upstream` (its grant under `mcp.auth`; without auth: yes). */
  private mayUse(who: SubscribingCaller, upstream: UpstreamDefinition): boolean {
    const server = this.resourceServer;
    if (server?.enabled !== true || who.caller === undefined) return true;
    return allowsSource(server.policy.accessFor(who.caller), upstream.id);
  }

  /** Whether a session other than `sessionId` holds `uri` bound to `upstreamId` here. */
  private boundElsewhere(sessionId: string, upstreamId: string, uri: string): boolean {
    for (const other of this.subscribers.get(uri) ?? [])
      if (
        other !== sessionId &&
        this.bySession.get(other)?.entries.get(uri)?.upstream.id === upstreamId
      )
        return true;
    return false;
  }

  /** Writes an update to the sessions' GET streams here, and with Redis on every replica. */
  private deliver(sessions: ReadonlySet<string>, sourceId: string, message: string): void {
    const here = this.hub.toSessions(sessions, sourceId, message);
    if (this.bus === null) return;
    // only the sessions whose GET stream is not here may be held by another replica
    const elsewhere = [...sessions].filter((session) => !here.has(session));
    if (elsewhere.length > 0)
      this.bus.publish({ op: 'deliver', sessions: elsewhere, sourceId, message });
  }

  /** What another replica shared: its update for sessions whose stream may be here, or an unsubscribe. */
  private fromBus(message: ResourceBusMessage): void {
    if (message.op === 'deliver') {
      // each stream's own grant still decides (NotificationHub.toSessions)
      this.hub.toSessions(new Set(message.sessions), message.sourceId, message.message);
      return;
    }
    // a session ended is released by SessionEnding (endSession)
    if (message.op !== 'forget') return;
    // the session left through another replica: no more relays from here (the upstream keeps
    // the gateway session's subscription until this replica's last subscriber leaves or the
    // session ends; what it then sends is dropped)
    // (whatever upstream this replica has it bound to: the replicas' catalogs may briefly differ)
    this.drop(message.session, [message.uri], true);
  }

  /**
   * Whether a subscription to this upstream can be bridged: it speaks 2026-07-28 (no
   * resources/subscribe) and offers resource subscriptions on `subscriptions/listen`.
   */
  canBridge(upstream: UpstreamDefinition): boolean {
    return this.listener.support(upstream)?.resourceSubscriptions === true;
  }

  /**
   * Bridges a 2025 session's subscription (already `add`ed) to a 2026 upstream: the session
   * holds one `subscriptions/listen` on it whose `resourceSubscriptions` are the session's URIs
   * there, opened again with the new set when it changes, with the subscribing request's
   * headers and caller (the caller's credential, as for its calls); what it delivers goes to
   * that session's GET stream (docs/operations.md §10 "Resource subscriptions").
   * @throws GatewayError (invalid params) when the replica holds MAX_BRIDGED_LISTENS
   */
  bridge(
    sessionId: string,
    upstream: UpstreamDefinition,
    uri: string,
    who: SubscribingCaller,
  ): void {
    const key = bridgeKey(sessionId, upstream.id);
    let held = this.bridged.get(key);
    // the listen of a registration deleted or replaced under the id since: ended, never
    // carrying this URI (its URIs there follow to the new one as each is rebound)
    if (held !== undefined && !sameUpstream(held.upstream, upstream)) {
      this.endBridged(key, held);
      held = undefined;
    }
    if (held === undefined) {
      const owner = callerKey(who.caller);
      if (
        owner !== undefined &&
        (this.bridgedPerCaller.get(owner) ?? 0) >= MAX_BRIDGED_LISTENS_PER_CALLER
      )
        throw new GatewayError(
          GatewayErrorCode.InvalidParams,
          `Too many bridged resource subscriptions: a caller may hold ${MAX_BRIDGED_LISTENS_PER_CALLER} on a gateway replica; unsubscribe first`,
        );
      if (this.bridged.size >= MAX_BRIDGED_LISTENS)
        throw new GatewayError(
          GatewayErrorCode.InvalidParams,
          'Too many bridged resource subscriptions on this gateway replica; try again later',
        );
      held = { upstream, owner, who, uris: new Set(), end: new AbortController() };
      this.bridged.set(key, held);
      if (owner !== undefined) count(this.bridgedPerCaller, owner, 1);
    }
    const had = held.uris.has(uri);
    held.uris.add(uri);
    const next = this.credentialFor(sessionId, held, Date.now(), who);
    if (had && held.expired !== true && next !== undefined && sameCredential(held.who, next))
      return;
    this.relisten(sessionId, held, next);
  }

  /**
   * The credential a bridged listen is (re-)opened with: of the session's subscriptions on it
   * that have not ended, the one whose own credential expires last (Subscription.who). The
   * latest subscribe's may expire first, and the listen would then stop for URIs whose own
   * tokens are still valid (docs/operations.md §10 "Resource subscriptions"). undefined when
   * none is live (never an expired credential; the narrowing ends the listen); `fallback` only
   * when none of its URIs is recorded (a bridge without `add`: unit tests).
   */
  private credentialFor(
    sessionId: string,
    held: BridgedListen,
    nowMs: number,
    fallback: SubscribingCaller,
  ): SubscribingCaller | undefined {
    const entries = this.bySession.get(sessionId)?.entries;
    let recorded = false;
    let best: SubscribingCaller | undefined;
    let bestExp = Number.NEGATIVE_INFINITY;
    for (const uri of held.uris) {
      const entry = entries?.get(uri);
      if (entry === undefined || entry.upstream.id !== held.upstream.id) continue;
      recorded = true;
      // its end is never after its credential's expiry (add)
      if (entry.expiresAtMs <= nowMs) continue;
      const exp = entry.who.caller?.expiresAt ?? Number.POSITIVE_INFINITY;
      if (exp >= bestExp) {
        best = entry.who;
        bestExp = exp;
      }
    }
    return recorded ? best : fallback;
  }

  /** Ends the bridged subscription of a session to a URI; true when there was one. */
  unbridge(sessionId: string, upstreamId: string, uri: string): boolean {
    const key = bridgeKey(sessionId, upstreamId);
    const held = this.bridged.get(key);
    if (held?.uris.delete(uri) !== true) return false;
    this.narrow(sessionId, key, held);
    return true;
  }

  /** A bridged listen that lost URIs: re-opened without them, or ended when none is left. */
  private narrow(sessionId: string, key: string, held: BridgedListen): void {
    if (held.uris.size === 0) {
      this.endBridged(key, held);
    } else {
      this.relisten(sessionId, held, this.credentialFor(sessionId, held, Date.now(), held.who));
    }
  }

  /**
   * Ends the bridged listens held on a runtime registration that is no longer the one applied
   * under its id (deleted, changed, or posted again: docs/operations.md §15 "Deleted means
   * gone"). Releasing its connection does not end them: each is a request in flight on it, with
   * the caller's headers, which the release waits out. Their subscriptions stay, bound to it
   * (no update, an unsubscribe sends nothing), until a registration of the id takes the URI
   * (followOwners) or they end.
   */
  private endRetiredBridges(): void {
    const registry = this.registry;
    if (registry === null) return;
    // read only when a registration's listen is held (configured upstreams never retire)
    let applied: Map<string, UpstreamDefinition> | undefined;
    for (const [key, held] of [...this.bridged]) {
      if (held.upstream.registration === undefined) continue;
      applied ??= new Map(registry.enabledUpstreams().map((u) => [u.id, u]));
      const now = applied.get(held.upstream.id);
      if (now === undefined || !sameUpstream(now, held.upstream)) this.endBridged(key, held);
    }
  }

  /** Ends a bridged listen and forgets it. */
  private endBridged(key: string, held: BridgedListen): void {
    held.end.abort();
    stopTimers(held);
    if (this.bridged.get(key) === held) this.bridged.delete(key);
    if (held.owner !== undefined) count(this.bridgedPerCaller, held.owner, -1);
  }

  /**
   * Whether the session's subscription to `uri` is bound to `upstreamId` and has not ended by
   * `nowMs` (its own token's expiry, ResourceSubscriptions.add): a bridged listen is one per
   * session and upstream, opened with the latest subscribing credential, so what it delivers is
   * checked against each subscription's own end, not the listen's.
   */
  private live(sessionId: string, uri: string, upstreamId: string, nowMs: number): boolean {
    const entry = this.bySession.get(sessionId)?.entries.get(uri);
    return entry !== undefined && entry.upstream.id === upstreamId && entry.expiresAtMs > nowMs;
  }

  /**
   * Arms the narrowing of a bridged listen at the end of the first of its subscriptions (their
   * own tokens' expiries): the ended ones are dropped then, and the listen re-opened without
   * them or ended, not left to the once-a-minute sweep (docs/security.md "Side paths bound to
   * the caller").
   */
  private narrowLater(sessionId: string, held: BridgedListen): void {
    const entries = this.bySession.get(sessionId)?.entries;
    let first = Number.POSITIVE_INFINITY;
    for (const uri of held.uris) {
      const entry = entries?.get(uri);
      if (entry !== undefined) first = Math.min(first, entry.expiresAtMs);
    }
    if (first === Number.POSITIVE_INFINITY) return;
    const end = held.end;
    held.narrowing = setTimeout(
      () => {
        held.narrowing = undefined;
        // re-opened (and armed again) meanwhile; an ended listen's timer is cleared
        if (held.end !== end) return;
        const nowMs = Date.now();
        const ended = [...held.uris].filter(
          (uri) => !this.live(sessionId, uri, held.upstream.id, nowMs),
        );
        // a timer that fired early, or a subscription renewed since it was armed
        if (ended.length === 0) this.narrowLater(sessionId, held);
        else this.drop(sessionId, ended, true);
      },
      Math.min(Math.max(0, first - Date.now()), MAX_TIMER_MS),
    );
    held.narrowing.unref();
  }

  /** Bridged listens held now. */
  get bridgedListens(): number {
    return this.bridged.size;
  }

  /** Re-opens a bridged listen with `who` (credentialFor); none: every subscription ended. */
  private relisten(
    sessionId: string,
    held: BridgedListen,
    who: SubscribingCaller | undefined,
  ): void {
    held.end.abort();
    held.end = new AbortController();
    stopTimers(held);
    this.narrowLater(sessionId, held);
    if (who === undefined) {
      // every subscription on it has ended: narrowLater's timer (due now) ends the listen
      held.expired = true;
      return;
    }
    held.who = who;
    // The listen carries the caller's credential (passthrough: its token) for as long as that
    // credential is valid, never after: no re-open replays an expired token
    // (docs/operations.md §10 "Resource subscriptions").
    const expiresAt = held.who.caller?.expiresAt;
    if (expiresAt !== undefined) {
      const left = expiresAt * 1000 - Date.now();
      held.expired = left <= 0;
      if (held.expired) return;
      const end = held.end;
      held.expiry = setTimeout(() => {
        held.expired = true;
        end.abort();
      }, left);
      held.expiry.unref();
    } else {
      held.expired = false;
    }
    this.recheckLater(held);
    const sessions: ReadonlySet<string> = new Set([sessionId]);
    const upstreamId = held.upstream.id;
    void this.listener.hold(
      held.upstream,
      { resourceSubscriptions: [...held.uris] },
      {
        headers: held.who.headers,
        caller: held.who.caller,
        signal: held.end.signal,
        onNotification: (method, params) => {
          const uri = params.uri;
          if (method !== RESOURCE_UPDATED || typeof uri !== 'string') return;
          // only what the URI's owner sends (docs/security.md "Routing of resource URIs")
          if (!held.uris.has(uri) || !this.owns(upstreamId, uri)) return;
          // the upstream's listen envelope stays there: a 2025 client gets the plain notification
          this.coalescer.offer(`${sessionId}\u0000${upstreamId}\u0000${uri}`, () => {
            // read when it is sent: the subscription's own token may have expired since, while
            // the listen goes on for the session's other URIs with a later credential
            if (this.live(sessionId, uri, upstreamId, Date.now()))
              this.deliver(sessions, upstreamId, updateMessage(uri, undefined));
          });
        },
      },
    );
  }

  /**
   * A bridged listen carries its caller's credential for no longer than a notification stream
   * would (docs/security.md "Sessions and notification streams"): every `recheckSeconds` the
   * Authorization value it was opened with is authenticated again, as a request's is, and a
   * token that is refused (revoked, inactive, no `exp`), another caller, or a grant that no
   * longer has the upstream ends the listen until a subscribe brings a credential that passes.
   * An authorization server that cannot answer (503) ends nothing: the next recheck tries again.
   */
  private recheckLater(held: BridgedListen): void {
    const server = this.resourceServer;
    const authorization = held.who.headers.authorization;
    if (server?.enabled !== true || authorization === undefined) return;
    const end = held.end;
    held.recheck = setTimeout(() => {
      void server.authenticate(authorization).then((outcome) => {
        // re-opened with another credential, or ended, meanwhile
        if (held.end !== end || end.signal.aborted) return;
        if (this.stillAllowed(outcome, held)) {
          this.recheckLater(held);
          return;
        }
        this.logger.log(
          `Ending a bridged subscription listen on upstream ${held.upstream.id}: its caller's recheck refused it`,
        );
        held.expired = true;
        end.abort();
      });
    }, this.recheckMs);
    held.recheck.unref();
  }

  private stillAllowed(outcome: AuthOutcome, held: BridgedListen): boolean {
    switch (outcome.kind) {
      case 'anonymous':
        return true;
      case 'refused':
        return outcome.status === 503;
      case 'authenticated':
        return (
          callerKey(outcome.caller) === held.owner &&
          this.resourceServer !== null &&
          allowsSource(this.resourceServer.policy.accessFor(outcome.caller), held.upstream.id)
        );
    }
  }

  /**
   * Records that `sessionId` subscribes to `uri` of `upstream` until `expiresAtMs` (the
   * session id's expiry), or until the subscribing caller's token expires when that is sooner.
   * A subscription the session holds to the URI on another upstream (made before the owner
   * changed) is moved to `upstream`. `headers` and `caller` are kept for bridging it should it
   * move to a 2026 owner later.
   * @throws GatewayError (invalid params) when the session, its caller or the replica holds as
   *   many as it may
   */
  add(
    sessionId: string,
    expiresAtMs: number,
    upstream: UpstreamDefinition,
    uri: string,
    caller?: CallerIdentity,
    headers: IncomingHeaders = {},
  ): void {
    const now = Date.now();
    this.sweep(now);
    // a subscription lasts no longer than the credential it was made with
    const until =
      caller?.expiresAt === undefined
        ? expiresAtMs
        : Math.min(expiresAtMs, caller.expiresAt * 1000);
    let session = this.bySession.get(sessionId);
    const held = session?.entries.get(uri);
    if (session !== undefined && held !== undefined) {
      session.who = { headers, caller };
      // the credential kept is the one its end is of
      if (until >= held.expiresAtMs) held.who = keptFor(session, upstream, headers, caller);
      held.expiresAtMs = Math.max(held.expiresAtMs, until);
      // its handler subscribes `upstream` itself: only the old binding is ended here
      if (!sameUpstream(held.upstream, upstream)) this.rebind(sessionId, session, held, upstream);
      return;
    }
    if ((session?.entries.size ?? 0) >= MAX_SUBSCRIPTIONS_PER_SESSION)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Too many resource subscriptions: a session may hold ${MAX_SUBSCRIPTIONS_PER_SESSION}; unsubscribe from one first`,
      );
    const owner = session?.owner ?? callerKey(caller);
    if (owner !== undefined && (this.perCaller.get(owner) ?? 0) >= MAX_SUBSCRIPTIONS_PER_CALLER)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Too many resource subscriptions: a caller may hold ${MAX_SUBSCRIPTIONS_PER_CALLER} on a gateway replica; unsubscribe from some first`,
      );
    if (this.total >= MAX_SUBSCRIPTIONS)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        'Too many resource subscriptions on this gateway replica; try again later',
      );
    if (session === undefined) {
      session = { owner, entries: new Map(), who: { headers, caller }, kept: new Map() };
      this.bySession.set(sessionId, session);
    }
    session.who = { headers, caller };
    session.entries.set(uri, {
      upstream,
      uri,
      expiresAtMs: until,
      who: keptFor(session, upstream, headers, caller),
    });
    if (owner !== undefined) count(this.perCaller, owner, 1);
    let sessions = this.subscribers.get(uri);
    if (sessions === undefined) {
      sessions = new Set();
      this.subscribers.set(uri, sessions);
    }
    sessions.add(sessionId);
    this.total++;
    this.sweeper ??= setInterval(() => this.sweep(Date.now()), SWEEP_EVERY_MS).unref();
  }

  /**
   * Forgets that `sessionId` subscribes to `uri`, whatever upstream it is bound to (a bridged
   * one's listen follows): an unsubscribe ends the subscription the session holds, even when
   * the URI changed owner since (docs/operations.md §10 "Resource subscriptions").
   * @returns `boundTo`: the upstream it was bound to (undefined when the session held none
   *   here); `othersRemain`: another session on this replica still subscribes to it there (on
   *   any upstream when the session held none; then the upstream must not be told to
   *   unsubscribe); `bridged`: it was bridged (nothing to forward)
   */
  remove(
    sessionId: string,
    uri: string,
  ): {
    readonly boundTo?: UpstreamDefinition;
    readonly othersRemain: boolean;
    readonly bridged: boolean;
  } {
    const boundTo = this.bySession.get(sessionId)?.entries.get(uri)?.upstream;
    const bridged =
      boundTo !== undefined &&
      this.bridged.get(bridgeKey(sessionId, boundTo.id))?.uris.has(uri) === true;
    // the caller's unsubscribe goes to the upstream from its handler when no one else holds it
    this.drop(sessionId, [uri], false);
    // the replica the session subscribed through may be another one (`upstreamId` says what
    // this one had it bound to; the receiver drops the session's subscription to the URI)
    this.bus?.publish({ op: 'forget', session: sessionId, upstreamId: boundTo?.id ?? '', uri });
    const othersRemain =
      boundTo === undefined
        ? (this.subscribers.get(uri)?.size ?? 0) > 0
        : this.boundElsewhere(sessionId, boundTo.id, uri);
    return { boundTo, othersRemain, bridged };
  }

  /**
   * Tells `upstream` with the gateway's own credential that no client here holds `uri` on it any
   * more, as when a subscription ends with its token's expiry: for an unsubscribe (`remove`d
   * already, no other session holding it) that may not go there as the caller's request (its
   * grant no longer has the upstream). Nothing is sent to a registration deleted or replaced
   * since (UpstreamListener.unsubscribe), nor to a 2026 upstream.
   */
  tellEnded(upstream: UpstreamDefinition, uri: string): void {
    void this.listener.unsubscribe(upstream, uri);
  }

  /**
   * Forgets every subscription of a session on this replica: its client ended it (DELETE /mcp,
   * docs/operations.md §9 "Ending a session"). A bridged listen held only for it closes; an
   * upstream no other session here subscribes to the URI through is told resources/unsubscribe.
   */
  endSession(sessionId: string): void {
    const session = this.bySession.get(sessionId);
    if (session !== undefined) this.drop(sessionId, [...session.entries.keys()], true);
  }

  /** The 2025 sessions holding a subscription on this replica. */
  sessionIds(): IterableIterator<string> {
    return this.bySession.keys();
  }

  /** Subscriptions held on this replica. */
  get size(): number {
    return this.total;
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.coalescer.close();
    for (const held of this.bridged.values()) {
      held.end.abort();
      stopTimers(held);
    }
    this.bridged.clear();
  }

  private updated(upstreamId: string, message: Readonly<Record<string, unknown>>): void {
    if (message.method !== RESOURCE_UPDATED) return;
    const params = message.params;
    const uri =
      typeof params === 'object' && params !== null && !Array.isArray(params)
        ? (params as Record<string, unknown>).uri
        : undefined;
    if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH) return;
    if ((this.subscribers.get(uri)?.size ?? 0) === 0) return;
    const meta = (params as Record<string, unknown>)._meta;
    // the sessions are read when it is sent: a burst coalesced goes to those subscribed then,
    // and not to one whose subscription expired since the last sweep; only the URI's owner's
    // updates reach them, to the sessions whose subscription is bound to it (docs/security.md
    // "Routing of resource URIs"), so an old owner's go nowhere once the URI moved
    this.coalescer.offer(keyOf(upstreamId, uri), () => {
      if (!this.owns(upstreamId, uri)) return;
      const sessions = this.unexpired(uri, upstreamId, Date.now());
      if (sessions.size > 0) this.deliver(sessions, upstreamId, updateMessage(uri, meta));
    });
  }

  /**
   * The sessions subscribed to `uri` bound to `upstreamId` whose subscriptions have not ended
   * by `nowMs`; those that have are dropped first (the sweep runs once a minute, a
   * subscription ends on the second).
   */
  private unexpired(uri: string, upstreamId: string, nowMs: number): ReadonlySet<string> {
    const live = new Set<string>();
    let ended: string[] | undefined;
    for (const sessionId of this.subscribers.get(uri) ?? []) {
      const entry = this.bySession.get(sessionId)?.entries.get(uri);
      if (entry === undefined || entry.upstream.id !== upstreamId) continue;
      if (entry.expiresAtMs <= nowMs) (ended ??= []).push(sessionId);
      else live.add(sessionId);
    }
    for (const sessionId of ended ?? []) this.drop(sessionId, [uri], true);
    return live;
  }

  /**
   * Forgets these subscriptions of a session. One that is bridged narrows its listen (every
   * URI of one upstream at once: one re-open, or the end with the last). For one that was the
   * last on this replica for its URI and not bridged, `tellUpstream` sends the upstream
   * `resources/unsubscribe` on the gateway's session (its subscription ended without a
   * client's unsubscribe: expiry, or an unsubscribe another replica received), so the upstream
   * does not keep a subscription that nobody here holds for as long as the session lives.
   */
  private drop(sessionId: string, uris: readonly string[], tellUpstream: boolean): void {
    const session = this.bySession.get(sessionId);
    if (session === undefined) return;
    const narrowed = new Map<string, BridgedListen>();
    for (const uri of uris) {
      const entry = session.entries.get(uri);
      if (entry === undefined) continue;
      session.entries.delete(uri);
      this.total--;
      if (session.owner !== undefined) count(this.perCaller, session.owner, -1);
      const sessions = this.subscribers.get(uri);
      sessions?.delete(sessionId);
      if (sessions?.size === 0) this.subscribers.delete(uri);
      const key = bridgeKey(sessionId, entry.upstream.id);
      const held = this.bridged.get(key);
      if (held?.uris.delete(uri) === true) narrowed.set(key, held);
      else if (tellUpstream && !this.boundElsewhere(sessionId, entry.upstream.id, uri))
        void this.listener.unsubscribe(entry.upstream, uri);
    }
    if (session.entries.size === 0) this.bySession.delete(sessionId);
    for (const [key, held] of narrowed) this.narrow(sessionId, key, held);
  }

  private sweep(nowMs: number): void {
    for (const [sessionId, session] of [...this.bySession]) {
      const ended = [...session.entries.values()].filter((entry) => entry.expiresAtMs <= nowMs);
      if (ended.length > 0)
        this.drop(
          sessionId,
          ended.map((entry) => entry.uri),
          true,
        );
    }
    if (this.total === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
