import { Injectable } from '@nestjs/common';
import { CatalogRefresh, RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import {
  RELAYING_REQUEST,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type PreparedRequest,
} from '../methods/method-handler';
import { MrtrCalls } from '../mrtr/mrtr-calls.service';
import { grantedResourceOwner } from '../relay/resource-owner';
import { stringParam, type Params } from '../relay/upstream-handler-support';

/**
 * `resources/read`: to the upstream that lists the URI or a template matching it
 * (docs/operations.md §10 "Routing").
 */
@Injectable()
export class ResourcesReadHandler implements MethodHandler {
  readonly method = 'resources/read';

  prepare(): PreparedRequest {
    return RELAYING_REQUEST;
  }

  constructor(
    private readonly registry: RegistryService,
    private readonly refresh: CatalogRefresh,
    private readonly mrtr: MrtrCalls,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const uri = stringParam(params, 'uri');
    // a URI this replica's catalog lacks gets one refresh before "not found", as prompts/get
    const owner = await grantedResourceOwner(this.registry, this.refresh, uri, context.access);
    if (owner === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Resource not found: ${uri.slice(0, 256)}`,
        { uri },
      );
    // through the rounds and era bridging of a tool call, as prompts/get
    return this.mrtr.call(
      {
        upstream: owner,
        method: 'resources/read',
        target: uri,
        arguments: params?.arguments,
        params: { ...params },
      },
      context,
    );
  }
}
