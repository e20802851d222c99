import { Injectable } from '@nestjs/common';
import type { UpstreamDefinition } from '@app/config';
import type { MethodContext, MethodResult } from './method-handler';
import {
  ResourceSubscriptionHandler,
  type SubscribingSession,
} from './resource-subscription.handler';
import type { Params } from './upstream-handler-support';

/**
 * `resources/subscribe`: to the owner of the URI (docs/operations.md §10 "Routing"), recorded
 * first so that an update sent right after the upstream's answer is not missed, and forgotten
 * again when the upstream refuses.
 */
@Injectable()
export class ResourcesSubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/subscribe';

  protected async route(
    owner: UpstreamDefinition,
    uri: string,
    params: Params,
    context: MethodContext,
    session: SubscribingSession | undefined,
  ): Promise<MethodResult> {
    if (session === undefined)
      return this.router.forward(owner, this.method, { ...params }, context);
    this.subscriptions.add(session.id, session.expiresAtMs, owner.id, uri);
    try {
      return await this.router.forward(owner, this.method, { ...params }, context);
    } catch (err) {
      this.subscriptions.remove(session.id, owner.id, uri);
      throw err;
    }
  }
}
