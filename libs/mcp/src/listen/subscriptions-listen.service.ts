import { Injectable } from '@nestjs/common';
import { declaresExtension, Extension, MetaKey } from '@app/wire';
import type { UpstreamDefinition } from '@app/config';
import {
  UpstreamListener,
  type CallCancellation,
  type IncomingHeaders,
  type UpstreamListenFilter,
} from '@app/execution';
import type { CallerIdentity } from '@app/identity';
import { ResourceServer, allowsSource, type CallerAccess } from '@app/identity';
import { RegistryService } from '@app/registry';
import { ServerCapabilities } from '../servers/server-capabilities';
import { VirtualServers } from '../servers/virtual-servers.service';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import type { FrameSource } from '../answers/sse-frame';
import { idJson, type JsonRpcId } from '../jsonrpc/jsonrpc.types';
import { LIST_CHANGED_METHOD, type ListKind } from './catalog-changes';
import {
  FILTER_KEY,
  filterAccepts,
  filterWatches,
  honoredFilter,
  isEmptyFilter,
  parseListenFilter,
  type SubscriptionFilter,
} from './listen-filter';
import { NotificationHub, type OpenStream } from './notification-hub.service';
import { NotificationStream } from './notification-stream';
import { TaskWatch } from '../tasks/task-watch';
import { RESOURCE_UPDATED, relayedChangeParams } from './update-params';
import { UpdateCoalescer } from './update-coalescer';

/** `_meta` keys of a listen stream (wire notes §2.8). */

/** What the 2026 codec knows of the listen request besides its params. */
export interface ListenRequest {
  readonly id: JsonRpcId;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** The agent's headers (forwarded to upstream listens as for calls). */
  readonly headers: IncomingHeaders;
  /** Aborted when the client closes the stream (or at the end of the shutdown grace period). */
  readonly signal?: CallCancellation;
  /** The authenticated caller (undefined when `mcp.auth` is off): caps and token expiry. */
  readonly caller?: CallerIdentity;
  /** The Authorization value it was authenticated with (HttpExchange.credential): rechecked while open. */
  readonly credential?: string | string[];
  /** The caller's grant as the request runs (narrowed to a virtual server's view on its path). */
  readonly access?: CallerAccess;
  /** The virtual server whose path the listen came on (docs/operations.md §16). */
  readonly server?: string;
}

/** Whether two upstream listen filters ask for the same (built in one order: upstreamFilter). */
function sameFilter(a: UpstreamListenFilter, b: UpstreamListenFilter): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** No room for another stream, for this caller or on this replica (listen.maxStreams…). */
function limitReached(): GatewayError {
  return new GatewayError(GatewayErrorCode.LimitReached, 'Subscription limit reached');
}

/** Whether the caller may use this upstream's notifications (its source is granted). */
function grants(access: CallerAccess | undefined, upstreamId: string): boolean {
  return access === undefined || allowsSource(access, upstreamId);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A notification stamped with the subscription id; an upstream's own id is replaced (G-20). */
function stamped(
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
  id: JsonRpcId,
): string {
  const meta = isRecord(params?._meta) ? { ...params._meta } : {};
  delete meta[MetaKey.subscriptionId];
  return JSON.stringify({
    jsonrpc: '2.0',
    method,
    params: { ...params, _meta: { ...meta, [MetaKey.subscriptionId]: id } },
  });
}

/**
 * One client's `subscriptions/listen` stream: the gateway's own catalog changes and the relayed
 * notifications of its upstream listens, filtered by what was honoured; ends when the client
 * closes it (the upstream listens end with it) or gracefully at shutdown.
 */
class ListenSubscription implements OpenStream {
  /**
   * The upstream listens held for this stream: upstream id → its definition, the filter it was
   * opened with (its share of the honoured filter when it opened) and its end.
   */
  readonly upstreamListens = new Map<
    string,
    {
      readonly upstream: UpstreamDefinition;
      readonly filter: UpstreamListenFilter;
      readonly end: AbortController;
    }
  >();
  /** Aborted when the stream closes: what watches tasks for it stops. */
  readonly ended = new AbortController();
  private closed = false;
  /**
   * Upstreams' `list_changed` notifications, at most one per list each interval (the first at
   * once, a burst's last when the interval is up, never dropped): one says only that a list
   * changed, and an upstream that sends thousands a second must not make the client list again
   * thousands of times (docs/operations.md §11 "Notification streams"). A resource's updates
   * go one by one, bounded by the stream's queue like everything else on it.
   */
  private readonly listChanges = new UpdateCoalescer();

  relaysFrom(upstreamId: string): boolean {
    return this.upstreamListens.has(upstreamId);
  }

  constructor(
    private readonly id: JsonRpcId,
    /** The honoured filter, what the upstream listens are cut from. */
    readonly filter: SubscriptionFilter,
    readonly stream: NotificationStream,
    private readonly closingResult: string,
    private readonly onClosed: (subscription: ListenSubscription) => void,
    /** The agent's headers, forwarded to upstream listens. */
    readonly headers: IncomingHeaders,
    /** The caller's grant: upstream listens only on granted upstreams, list changes in it. */
    readonly access: CallerAccess | undefined,
    /** The caller, whose token a tokenExchange upstream's listen exchanges (as a call does). */
    readonly caller: CallerIdentity | undefined,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  listChanged(kind: ListKind): void {
    if (this.filter[FILTER_KEY[kind]] === true)
      this.stream.push(stamped(LIST_CHANGED_METHOD[kind], undefined, this.id));
  }

  /**
   * A change notification of an upstream listen, passed on when what that upstream's listen
   * asked for takes it (`asked`: the upstream's share of the honoured filter, its own list
   * kinds and the URIs it owns). An upstream is trusted for its own resources only: an update
   * it sends for another source's URI, or a list kind it was not asked for, is dropped
   * (docs/security.md, "Hostile upstreams"). What is passed on is what the notification type
   * holds (relayedChangeParams); each one is, in order: a client that cannot keep up is closed
   * past `listen.maxQueuedBytes` (NotificationStream), as the notifications it missed are its
   * to learn of again.
   */
  relay(
    asked: UpstreamListenFilter,
    method: string,
    params: Readonly<Record<string, unknown>>,
  ): void {
    if (
      !filterAccepts(asked, method, params.uri) ||
      !filterAccepts(this.filter, method, params.uri)
    )
      return;
    const push = () => {
      if (!this.closed)
        this.stream.push(stamped(method, relayedChangeParams(method, params), this.id));
    };
    if (method.endsWith('/list_changed')) this.listChanges.offer(method, push);
    else push();
  }

  /** A task's status, passed on when the filter names its id (TaskWatch). */
  relayTask(params: Record<string, unknown>): void {
    if (filterWatches(this.filter, params.taskId))
      this.stream.push(stamped('notifications/tasks', params, this.id));
  }

  keepAlive(): void {
    this.stream.comment('keepalive');
  }

  close(graceful: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.listChanges.close();
    this.ended.abort();
    for (const held of this.upstreamListens.values()) held.end.abort();
    this.upstreamListens.clear();
    this.stream.end(graceful ? this.closingResult : undefined);
    this.onClosed(this);
  }
}

/**
 * `subscriptions/listen` for 2026-07-28 clients (docs/operations.md §11 "Notification streams";
 * wire notes §2.8, G-20): an SSE answer that starts with `notifications/subscriptions/acknowledged`
 * (the honoured subset of the filter), then carries the list_changed notifications of the gateway's
 * catalog and the change notifications of the 2026 upstreams that support listen (one upstream
 * listen each, for the life of the stream), every message tagged with the listen's id; keep-alive
 * comments come from the NotificationHub. An empty honoured filter is acknowledged and closed at
 * once with the closing result. Errors are in-band on 200, as the v2 SDK answers them: a missing
 * or malformed filter -32602, no room for another stream (`mcp.listen.maxStreams`, or the
 * caller's `maxStreamsPerCaller`) -32603 "Subscription limit reached". The stream closes when
 * the caller's token expires, when a recheck finds the token refused or the grant changed
 * (`mcp.listen.recheckSeconds`), or when its client stops reading (NotificationHub); past the
 * token's `exp` (it is accepted `clockSkewSeconds` longer) also as soon as an upstream listen
 * or a watched upstream task would need the expired token sent again (docs/security.md
 * "Answers to relayed requests").
 */
@Injectable()
export class SubscriptionsListen {
  /** The listen streams open on this replica. */
  private readonly subscriptions = new Set<ListenSubscription>();

  constructor(
    private readonly hub: NotificationHub,
    private readonly capabilities: ServerCapabilities,
    private readonly registry: RegistryService,
    private readonly upstreamListener: UpstreamListener,
    private readonly resourceServer: ResourceServer,
    private readonly taskWatch: TaskWatch,
    private readonly servers: VirtualServers,
  ) {
    // upstreams registered, replaced or removed at runtime (docs/operations.md §15), and upstreams
    // whose listen support became known: the open streams follow them after every round (which
    // covers every publication; a change may leave the published catalog as it was)
    registry.onRoundApplied(() => {
      for (const subscription of this.subscriptions) this.syncUpstreamListens(subscription);
    });
  }

  /**
   * Opens the stream of one `subscriptions/listen` request: acknowledged at once, then what the
   * honoured filter lets through. Throws a GatewayError for a bad filter (-32602) and when the
   * caller's or the replica's streams are all taken (-32603 "Subscription limit reached").
   */
  open(request: ListenRequest): FrameSource {
    const { id } = request;
    const parsed = parseListenFilter(request.params);
    if ('problem' in parsed)
      throw new GatewayError(GatewayErrorCode.InvalidParams, `Invalid params: ${parsed.problem}`);
    if (this.hub.room(request.caller) !== 'open') throw limitReached();
    const extras = this.registry.current()?.extras;
    // what the caller may use (`mcp.access`): the honoured filter, the upstream listens and
    // what is relayed are all cut to it
    const granted = this.resourceServer.policy.accessFor(request.caller);
    // on a virtual server's path: the view as well (docs/operations.md §16)
    const access = request.server === undefined ? granted : (request.access ?? granted);
    // a URI is honoured only when its owner is granted to the caller: one outside the grant is
    // dropped from the acknowledgement, exactly as a URI nobody serves (docs/security.md
    // "Listen filters and list changes")
    const meta = request.params?._meta;
    const declaresTasks = declaresExtension(
      isRecord(meta) ? meta[MetaKey.clientCapabilities] : undefined,
      Extension.tasks,
    );
    const watchable = new Set(
      declaresTasks && parsed.filter.taskIds !== undefined
        ? this.taskWatch.honor(parsed.filter.taskIds, request.caller, access)
        : [],
    );
    const honored = honoredFilter(
      parsed.filter,
      this.capabilities.current(),
      (uri) => {
        const owner = extras?.resourceOwner(uri);
        return (
          owner !== undefined &&
          grants(access, owner.id) &&
          this.upstreamListener.support(owner)?.resourceSubscriptions === true
        );
      },
      // a task id only when it was handed to this caller, for a listen that declares the Tasks
      // extension (docs/operations.md §10 "Tasks")
      (taskId) => watchable.has(taskId),
    );
    const stream = this.hub.newStream();
    stream.push(
      stamped('notifications/subscriptions/acknowledged', { notifications: honored }, id),
    );
    const closingResult = `{"jsonrpc":"2.0","id":${idJson(id)},"result":${JSON.stringify({
      resultType: 'complete',
      // on a virtual server's path, that server's serverInfo, as in every result there
      _meta: {
        [MetaKey.subscriptionId]: id,
        [MetaKey.serverInfo]: this.servers.identityOf(request.server).serverInfo,
      },
    })}}`;
    if (isEmptyFilter(honored)) {
      // nothing to deliver: acknowledged, then closed gracefully at once (as the v2 SDK does)
      stream.end(closingResult);
      return stream;
    }
    const subscription = new ListenSubscription(
      id,
      honored,
      stream,
      closingResult,
      (s) => {
        this.subscriptions.delete(s);
        this.hub.remove(s);
      },
      request.headers,
      access,
      request.caller,
    );
    // the Authorization value that opened it is checked again while it is open (NotificationHub)
    if (this.hub.add(subscription, request.caller, request.credential) !== 'open')
      throw limitReached();
    this.subscriptions.add(subscription);
    const { signal } = request;
    if (signal?.aborted === true) subscription.close(false);
    else signal?.onAbort((reason) => subscription.close(reason === 'shutdown'));
    this.syncUpstreamListens(subscription);
    // a listen whose client left before it opened watches nothing (TaskWatch.watch too)
    if (honored.taskIds !== undefined && !subscription.isClosed)
      this.taskWatch.watch(honored.taskIds, {
        caller: request.caller,
        access,
        // a task no longer in the path's view is told no more (docs/operations.md §10 "Grants")
        accessNow: () => this.servers.narrowFor(access, this.registry.current()),
        headers: request.headers,
        signal: subscription.ended.signal,
        push: (params) => subscription.relayTask(params),
        // an upstream's task could only be read with the expired token: ended as at expiry
        onCredentialExpired: () => this.hub.expire(subscription),
      });
    return stream;
  }

  /**
   * One upstream listen per enabled 2026 upstream granted to the caller that can deliver part
   * of the honoured filter (no request reaches an upstream outside the grant, nor does one of
   * its notifications reach the caller): opened for an upstream that has none yet (at open,
   * and after every round, which is how an upstream registered at runtime joins), ended for
   * one that was removed, disabled or replaced (a replaced one gets a new listen on its new
   * definition). Each held listen's filter is computed again after every round: when a
   * subscribed URI changed owner, the old owner's listen is re-opened without it (or ended when
   * nothing is left) and the new owner's opened or re-opened with it (docs/operations.md §11
   * "Notification streams").
   */
  private syncUpstreamListens(subscription: ListenSubscription): void {
    if (subscription.isClosed) return;
    const enabled = new Map(this.registry.enabledUpstreams().map((u) => [u.id, u]));
    const held = subscription.upstreamListens;
    for (const [id, listen] of held)
      if (enabled.get(id) !== listen.upstream) {
        listen.end.abort();
        held.delete(id);
      }
    const ownerOf = (uri: unknown): UpstreamDefinition | undefined =>
      typeof uri === 'string' ? this.registry.current()?.extras.resourceOwner(uri) : undefined;
    for (const upstream of enabled.values()) {
      // a listen that could not open for an expired token closed the stream (onCredentialExpired)
      if (subscription.isClosed) return;
      if (!grants(subscription.access, upstream.id)) continue;
      const filter = this.upstreamFilter(upstream, subscription.filter, ownerOf);
      const listen = held.get(upstream.id);
      if (listen !== undefined) {
        if (filter !== undefined && sameFilter(listen.filter, filter)) continue;
        listen.end.abort();
        held.delete(upstream.id);
      }
      if (filter === undefined) continue;
      const end = new AbortController();
      held.set(upstream.id, { upstream, filter, end });
      void this.upstreamListener.hold(upstream, filter, {
        headers: subscription.headers,
        caller: subscription.caller,
        signal: end.signal,
        onNotification: (method, params) => {
          // an update is the URI's owner's to send (docs/security.md "Its own notifications
          // only"): between an owner change and the re-opened listen, the old owner's is dropped
          if (method === RESOURCE_UPDATED && ownerOf(params.uri)?.id !== upstream.id) return;
          subscription.relay(filter, method, params);
        },
        // the upstream listen would have to be opened again with the caller's expired token
        // (it dropped it, or a round changed its filter): the stream ends as at its expiry
        // rather than going on without that upstream's notifications
        onCredentialExpired: () => this.hub.expire(subscription),
      });
    }
  }

  /** The part of the honoured filter this upstream can deliver; undefined when none. */
  private upstreamFilter(
    upstream: UpstreamDefinition,
    honored: SubscriptionFilter,
    ownerOf: (uri: string) => UpstreamDefinition | undefined,
  ): UpstreamListenFilter | undefined {
    const support = this.upstreamListener.support(upstream);
    if (support === undefined) return undefined;
    const filter: {
      -readonly [K in keyof UpstreamListenFilter]: UpstreamListenFilter[K];
    } = {};
    for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const)
      if (honored[key] === true && support[key]) filter[key] = true;
    const uris = support.resourceSubscriptions
      ? (honored.resourceSubscriptions ?? []).filter((uri) => ownerOf(uri)?.id === upstream.id)
      : [];
    if (uris.length > 0) filter.resourceSubscriptions = uris;
    return Object.keys(filter).length === 0 ? undefined : filter;
  }
}
