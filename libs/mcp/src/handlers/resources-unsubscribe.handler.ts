import { Injectable } from '@nestjs/common';
import type { MethodContext, MethodResult } from '../methods/method-handler';
import {
  ResourceSubscriptionHandler,
  type SubscribingSession,
} from './resource-subscription.handler';
import type { Params } from '../relay/upstream-handler-support';

/**
 * `resources/unsubscribe` (a 2025 session's only: ResourceSubscriptionHandler refuses one
 * without a session): the session's subscription to the URI is forgotten whatever upstream it
 * is bound to — the URI's owner when it was made, or the one it moved to since
 * (docs/operations.md §10 "Resource subscriptions") — and the request goes to that upstream
 * only when no other session on this replica still subscribes to the URI there (the gateway's
 * one session with the upstream holds the subscription for all of them) and it was not bridged
 * to a listen (which ends here); otherwise it is answered here with an empty result. A session
 * holding none is answered as before the subscriptions were kept: to the URI's owner (found
 * as resources/read finds it) unless another session holds it.
 *
 * A subscription outlives the grant it was made under: the same caller's later token (its
 * session's) may be granted less, and a runtime registration may have been deleted or
 * replaced under its id since. Its unsubscribe then goes with the gateway's own credential,
 * as when the subscription ends with its token's expiry, never with the request's: no request
 * of a caller, nor its credential (`passthrough`, `forwardHeaders`), reaches an upstream
 * outside its grant, nor a registration other than the one applied now (docs/security.md
 * "Listen filters and list changes"; docs/operations.md §15 "Deleted means gone").
 */
@Injectable()
export class ResourcesUnsubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/unsubscribe';

  protected async route(
    uri: string,
    params: Params,
    context: MethodContext,
    session: SubscribingSession,
  ): Promise<MethodResult> {
    const { boundTo, othersRemain, bridged } = this.subscriptions.remove(session.id, uri);
    // a bridged one ended with its listen; one another session holds stays on the upstream
    if (bridged || othersRemain) return {};
    if (boundTo !== undefined && !this.mayForward(boundTo, context)) {
      this.subscriptions.tellEnded(boundTo, uri);
      return {};
    }
    const upstream = boundTo ?? (await this.ownerOf(uri, context));
    return this.router.forward(upstream, this.method, { ...params }, context);
  }
}
