import { Injectable } from '@nestjs/common';
import { JsonRpcCode } from '@app/wire';
import { ForwardedError } from '../errors/gateway-error';
import type { MethodContext, MethodResult } from '../methods/method-handler';
import {
  ResourceSubscriptionHandler,
  type SubscribingSession,
} from './resource-subscription.handler';
import type { Params } from '../relay/upstream-handler-support';

/**
 * `resources/subscribe`: to the owner of the URI (docs/operations.md §10 "Routing"), recorded
 * first so that an update sent right after the upstream's answer is not missed, and forgotten
 * again when the upstream refuses. A 2026 upstream answers "Method not found" (2026 has no
 * resources/subscribe): the subscription is then bridged to a `subscriptions/listen` on it
 * (ResourceSubscriptions.bridge; docs/operations.md §10 "Resource subscriptions").
 */
@Injectable()
export class ResourcesSubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/subscribe';

  protected async route(
    uri: string,
    params: Params,
    context: MethodContext,
    session: SubscribingSession,
  ): Promise<MethodResult> {
    const owner = await this.ownerOf(uri, context);
    this.subscriptions.add(
      session.id,
      session.expiresAtMs,
      owner,
      uri,
      context.caller,
      context.headers,
    );
    try {
      return await this.router.forward(owner, this.method, { ...params }, context);
    } catch (err) {
      // a 2026 upstream has no resources/subscribe: bridged to its subscriptions/listen
      if (
        err instanceof ForwardedError &&
        err.rpcCode === JsonRpcCode.MethodNotFound &&
        this.subscriptions.canBridge(owner)
      ) {
        this.subscriptions.bridge(session.id, owner, uri, {
          headers: context.headers,
          caller: context.caller,
        });
        return {};
      }
      this.subscriptions.remove(session.id, uri);
      throw err;
    }
  }
}
