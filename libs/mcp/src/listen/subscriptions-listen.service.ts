import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig, type UpstreamDefinition } from '@app/config';
import {
  UpstreamListener,
  type CallCancellation,
  type IncomingHeaders,
  type UpstreamListenFilter,
} from '@app/execution';
import { RegistryService } from '@app/registry';
import { ServerCapabilities } from '../handlers/server-capabilities';
import { errorEnvelope, messageAnswer, streamAnswer, type HttpAnswer } from '../http/http-answer';
import { idJson, type JsonRpcId } from '../jsonrpc/jsonrpc.types';
import { LIST_CHANGED_METHOD, type ListKind } from './catalog-changes';
import {
  FILTER_KEY,
  filterAccepts,
  honoredFilter,
  isEmptyFilter,
  parseListenFilter,
  type SubscriptionFilter,
} from './listen-filter';
import { NotificationHub, type OpenStream } from './notification-hub.service';
import { NotificationStream } from './notification-stream';

/** `_meta` keys of a listen stream (wire notes §2.8). */
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** What the 2026 codec knows of the listen request besides its params. */
export interface ListenRequest {
  readonly id: JsonRpcId;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** The agent's headers (forwarded to upstream listens as for calls). */
  readonly headers: IncomingHeaders;
  /** Aborted when the client closes the stream (or at the end of the shutdown grace period). */
  readonly signal?: CallCancellation;
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
  delete meta[META_SUBSCRIPTION_ID];
  return JSON.stringify({
    jsonrpc: '2.0',
    method,
    params: { ...params, _meta: { ...meta, [META_SUBSCRIPTION_ID]: id } },
  });
}

/**
 * One client's `subscriptions/listen` stream: the gateway's own catalog changes and the relayed
 * notifications of its upstream listens, filtered by what was honoured; ends when the client
 * closes it (the upstream listens end with it) or gracefully at shutdown.
 */
class ListenSubscription implements OpenStream {
  /** Ends the upstream listens. */
  readonly upstreams = new AbortController();
  private closed = false;

  constructor(
    private readonly id: JsonRpcId,
    private readonly filter: SubscriptionFilter,
    readonly stream: NotificationStream,
    private readonly closingResult: string,
    private readonly onClosed: (subscription: ListenSubscription) => void,
  ) {}

  listChanged(kind: ListKind): void {
    if (this.filter[FILTER_KEY[kind]] === true)
      this.stream.push(stamped(LIST_CHANGED_METHOD[kind], undefined, this.id));
  }

  /** A change notification of an upstream listen, passed on when the filter takes it. */
  relay(method: string, params: Readonly<Record<string, unknown>>): void {
    if (filterAccepts(this.filter, method, params.uri))
      this.stream.push(stamped(method, params, this.id));
  }

  keepAlive(): void {
    this.stream.comment('keepalive');
  }

  close(graceful: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.upstreams.abort();
    this.stream.end(graceful ? this.closingResult : undefined);
    this.onClosed(this);
  }
}

/**
 * `subscriptions/listen` for 2026-07-28 clients (issue 11 §6; wire notes §2.8, G-20): an SSE
 * answer that starts with `notifications/subscriptions/acknowledged` (the honoured subset of
 * the filter), then carries the list_changed notifications of the gateway's catalog and the
 * change notifications of the 2026 upstreams that support listen (one upstream listen each,
 * for the life of the stream), every message tagged with the listen's id; keep-alive comments
 * come from the NotificationHub. An empty honoured filter is acknowledged and closed at once
 * with the closing result. Errors are in-band on 200, as the v2 SDK answers them: a missing
 * or malformed filter -32602, no room for another stream -32603 "Subscription limit reached".
 */
@Injectable()
export class SubscriptionsListen {
  private readonly serverInfo: { name: string; version: string };

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly hub: NotificationHub,
    private readonly capabilities: ServerCapabilities,
    private readonly registry: RegistryService,
    private readonly upstreamListener: UpstreamListener,
  ) {
    this.serverInfo = { name: config.mcp.identity, version: config.version };
  }

  open(request: ListenRequest): HttpAnswer {
    const { id } = request;
    const parsed = parseListenFilter(request.params);
    if ('problem' in parsed)
      return messageAnswer(
        200,
        errorEnvelope(id, -32602, `Invalid params: ${parsed.problem}`),
        'json',
      );
    if (!this.hub.hasRoom)
      return messageAnswer(200, errorEnvelope(id, -32603, 'Subscription limit reached'), 'json');
    const extras = this.registry.current()?.extras;
    const honored = honoredFilter(parsed.filter, this.capabilities.current(), (uri) => {
      const owner = extras?.resourceOwner(uri);
      return (
        owner !== undefined && this.upstreamListener.support(owner)?.resourceSubscriptions === true
      );
    });
    const stream = new NotificationStream();
    stream.push(
      stamped('notifications/subscriptions/acknowledged', { notifications: honored }, id),
    );
    const closingResult = `{"jsonrpc":"2.0","id":${idJson(id)},"result":${JSON.stringify({
      resultType: 'complete',
      _meta: { [META_SUBSCRIPTION_ID]: id, [META_SERVER_INFO]: this.serverInfo },
    })}}`;
    if (isEmptyFilter(honored)) {
      // nothing to deliver: acknowledged, then closed gracefully at once (as the v2 SDK does)
      stream.end(closingResult);
      return streamAnswer(stream);
    }
    const subscription = new ListenSubscription(id, honored, stream, closingResult, (s) =>
      this.hub.remove(s),
    );
    if (!this.hub.add(subscription))
      return messageAnswer(200, errorEnvelope(id, -32603, 'Subscription limit reached'), 'json');
    const { signal } = request;
    if (signal?.aborted === true) subscription.close(false);
    else signal?.onAbort((reason) => subscription.close(reason === 'shutdown'));
    this.openUpstreamListens(subscription, honored, request.headers);
    return streamAnswer(stream);
  }

  /** One upstream listen per 2026 upstream that can deliver part of the honoured filter. */
  private openUpstreamListens(
    subscription: ListenSubscription,
    honored: SubscriptionFilter,
    headers: IncomingHeaders,
  ): void {
    const extras = this.registry.current()?.extras;
    for (const upstream of this.registry.enabledUpstreams()) {
      const filter = this.upstreamFilter(upstream, honored, (uri) => extras?.resourceOwner(uri));
      if (filter === undefined) continue;
      void this.upstreamListener.hold(upstream, filter, {
        headers,
        signal: subscription.upstreams.signal,
        onNotification: (method, params) => subscription.relay(method, params),
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
