import { Injectable } from '@nestjs/common';
import type { MethodContext, MethodResult } from '../methods/method-handler';
import {
  ResourceSubscriptionHandler,
  type SubscribingSession,
} from './resource-subscription.handler';
import type { Params } from '../relay/upstream-handler-support';

/**
 * `resources/unsubscribe` (a 2025 session's only: ResourceSubscriptionHandler refuses one
 * without a session): forgotten for the request's session, and forwarded to the owner of
 * the URI (docs/operations.md §10 "Routing") only when no other session on this replica still
 * subscribes to it — the gateway's one session with the upstream holds the subscription for
 * all of them — and it was not bridged to a listen (which ends here); otherwise answered here
 * with an empty result.
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
    const owner = await this.ownerOf(uri, context);
    const { othersRemain, bridged } = this.subscriptions.remove(session.id, owner.id, uri);
    // a bridged one ended with its listen; one another session holds stays on the upstream
    if (bridged || othersRemain) return {};
    return this.router.forward(owner, this.method, { ...params }, context);
  }
}
