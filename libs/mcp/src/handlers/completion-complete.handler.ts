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
import { UpstreamRouter } from '../relay/upstream-router';
import { granted, grantedEntry, type Params } from '../relay/upstream-handler-support';
import { LiveLists } from './live-lists.service';

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
    private readonly refresh: CatalogRefresh,
    private readonly router: UpstreamRouter,
    private readonly live: LiveLists,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const ref = params?.ref as Readonly<Record<string, unknown>> | undefined;
    // a ref this replica's catalog lacks gets one refresh before "unknown", as prompts/get
    // (upstream-handler-support.ts grantedEntry)
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
      const name = ref.name;
      // a live upstream's prompt is in no catalog: from the caller's live list, as prompts/get
      // finds it (no refresh: that list is fetched for the request; outside the grant: unknown)
      const liveOwner = this.live.active ? this.live.ownerOf(name) : undefined;
      const prompt =
        liveOwner !== undefined
          ? granted(context.access, liveOwner.id)
            ? await this.live.promptFor(name, context)
            : undefined
          : await grantedEntry(
              this.registry,
              this.refresh,
              (catalog) => catalog.extras.prompt(name),
              (p) => p.upstream.id,
              context.access,
            );
      if (prompt !== undefined)
        return this.router.forward(
          prompt.upstream,
          this.method,
          { ...params, ref: { ...ref, name: prompt.originalName } },
          context,
        );
    } else if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      const uri = ref.uri;
      const owner = await grantedEntry(
        this.registry,
        this.refresh,
        (catalog) => catalog.extras.resourceOwner(uri),
        (o) => o.id,
        context.access,
      );
      if (owner !== undefined)
        return this.router.forward(owner, this.method, { ...params }, context);
    } else {
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        'Invalid params: params.ref must be {type:"ref/prompt",name} or {type:"ref/resource",uri}',
      );
    }
    throw new GatewayError(
      GatewayErrorCode.InvalidParams,
      'Invalid params: unknown completion ref',
    );
  }
}
