import { Injectable } from '@nestjs/common';
import { RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import {
  RELAYING_REQUEST,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type PreparedRequest,
} from './method-handler';
import { UpstreamRouter } from './upstream-router';
import { catalogOf, granted, type Params } from './upstream-handler-support';

/**
 * `completion/complete`: a `ref/prompt` goes to the prompt's upstream with its own name, a
 * `ref/resource` to the owner of the URI or template (docs/operations.md §10 "Routing").
 */
@Injectable()
export class CompletionCompleteHandler implements MethodHandler {
  readonly method = 'completion/complete';

  prepare(): PreparedRequest {
    return RELAYING_REQUEST;
  }

  constructor(
    private readonly registry: RegistryService,
    private readonly router: UpstreamRouter,
  ) {}

  handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const ref = params?.ref as Readonly<Record<string, unknown>> | undefined;
    const extras = catalogOf(this.registry).extras;
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
      const prompt = extras.prompt(ref.name);
      if (prompt !== undefined && granted(context.access, prompt.upstream.id))
        return this.router.forward(
          prompt.upstream,
          this.method,
          { ...params, ref: { ...ref, name: prompt.originalName } },
          context,
        );
    } else if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      const owner = extras.resourceOwner(ref.uri);
      if (owner !== undefined && granted(context.access, owner.id))
        return this.router.forward(owner, this.method, { ...params }, context);
    } else {
      return Promise.reject(
        new GatewayError(
          GatewayErrorCode.InvalidParams,
          'Invalid params: params.ref must be {type:"ref/prompt",name} or {type:"ref/resource",uri}',
        ),
      );
    }
    return Promise.reject(
      new GatewayError(GatewayErrorCode.InvalidParams, 'Invalid params: unknown completion ref'),
    );
  }
}
