import { Injectable } from '@nestjs/common';
import { sameUpstream, type UpstreamDefinition } from '@app/config';
import { CatalogRefresh, RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { MAX_URI_LENGTH, ResourceSubscriptions } from '../listen/resource-subscriptions.service';
import { SessionTokenService } from '../session/session-token.service';
import type { MethodContext, MethodHandler, MethodResult } from '../methods/method-handler';
import { UpstreamRouter } from '../relay/upstream-router';
import { grantedResourceOwner } from '../relay/resource-owner';
import { granted, stringParam, type Params } from '../relay/upstream-handler-support';

/** The 2025 session a request came on, and when its id stops opening; none without one. */
export interface SubscribingSession {
  readonly id: string;
  readonly expiresAtMs: number;
}

/**
 * `resources/subscribe` and `resources/unsubscribe`: to the owner of the URI
 * (docs/operations.md §10 "Routing"; an unsubscribe to the upstream the session's subscription
 * is bound to, which follows the owner), and recorded for the request's 2025 session so that the
 * owner's updates reach that session's GET stream (ResourceSubscriptions;
 * docs/operations.md §10 "Resource subscriptions").
 */
@Injectable()
export abstract class ResourceSubscriptionHandler implements MethodHandler {
  abstract readonly method: string;

  constructor(
    private readonly registry: RegistryService,
    private readonly refresh: CatalogRefresh,
    protected readonly router: UpstreamRouter,
    protected readonly subscriptions: ResourceSubscriptions,
    private readonly sessions: SessionTokenService,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const uri = stringParam(params, 'uri');
    // a session holds up to 100 subscriptions on this replica, each with its URI: bounded
    if (uri.length > MAX_URI_LENGTH)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Invalid params: a subscribed resource URI may have at most ${MAX_URI_LENGTH} characters (got ${uri.length})`,
      );
    // A subscription lives in its 2025 session (its updates go on the session's GET stream).
    // Without one it would subscribe the gateway's shared upstream session for no client, and
    // an unsubscribe would end what other clients' sessions hold there: both are refused.
    const session = this.sessionOf(context);
    if (session === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidRequest,
        this.sessions.sealed
          ? `${this.method} needs a session: a subscription's updates are written on its session's GET stream; send the Mcp-Session-Id that initialize gave`
          : `${this.method} needs a session, and this gateway issues none (MCP_SESSION_KEYS is not set): resource updates cannot be delivered`,
      );
    return this.route(uri, params, context, session);
  }

  /**
   * The owner of `uri` the caller may use, found as resources/read finds it (one refresh on a
   * miss: docs/operations.md §10 "Routing").
   * @throws GatewayError (invalid params) "Resource not found" when there is none
   */
  protected async ownerOf(uri: string, context: MethodContext): Promise<UpstreamDefinition> {
    const owner = await grantedResourceOwner(this.registry, this.refresh, uri, context.access);
    if (owner === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Resource not found: ${uri.slice(0, 256)}`,
        { uri },
      );
    return owner;
  }

  /**
   * Whether a request for a subscription bound to `upstream` may go there as this request (with
   * its caller's credential): the caller's grant on the request's path has the upstream now, and
   * `upstream` is the registration applied now under its id, not one deleted or replaced since
   * (docs/operations.md §15 "Deleted means gone").
   */
  protected mayForward(upstream: UpstreamDefinition, context: MethodContext): boolean {
    if (!granted(context.access, upstream.id)) return false;
    return this.registry.enabledUpstreams().some((now) => sameUpstream(now, upstream));
  }

  /** Forwards (or answers) the request, recording it for `session`. */
  protected abstract route(
    uri: string,
    params: Params,
    context: MethodContext,
    session: SubscribingSession,
  ): Promise<MethodResult>;

  private sessionOf(context: MethodContext): SubscribingSession | undefined {
    const header = context.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    if (id === undefined || !this.sessions.sealed) return undefined;
    const claims = this.sessions.openFor(id, context.caller);
    return claims === undefined ? undefined : { id, expiresAtMs: claims.expiresAt * 1000 };
  }
}
