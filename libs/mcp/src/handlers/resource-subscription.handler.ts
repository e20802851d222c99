import { Injectable } from '@nestjs/common';
import { RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import type { MethodContext, MethodHandler, MethodResult } from './method-handler';
import { UpstreamRouter } from './upstream-router';
import { catalogOf, granted, stringParam, type Params } from './upstream-handler-support';

/**
 * `resources/subscribe` and `resources/unsubscribe`: to the owner of the URI
 * (docs/operations.md §10 "Routing").
 */
@Injectable()
export abstract class ResourceSubscriptionHandler implements MethodHandler {
  abstract readonly method: string;

  constructor(
    private readonly registry: RegistryService,
    private readonly router: UpstreamRouter,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const uri = stringParam(params, 'uri');
    const owner = catalogOf(this.registry).extras.resourceOwner(uri);
    if (owner === undefined || !granted(context.access, owner.id))
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Resource not found: ${uri.slice(0, 256)}`,
        { uri },
      );
    return this.router.forward(owner, this.method, { ...params }, context);
  }
}
