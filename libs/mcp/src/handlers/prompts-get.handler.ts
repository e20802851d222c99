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
import { LiveLists } from './live-lists.service';
import { MrtrCalls } from '../mrtr/mrtr-calls.service';
import { catalogOf, granted, stringParam, type Params } from '../relay/upstream-handler-support';

/**
 * `prompts/get`: to the owning upstream with its own prompt name
 * (docs/operations.md §10 "Routing").
 */
@Injectable()
export class PromptsGetHandler implements MethodHandler {
  readonly method = 'prompts/get';

  prepare(): PreparedRequest {
    return RELAYING_REQUEST;
  }

  constructor(
    private readonly registry: RegistryService,
    private readonly refresh: CatalogRefresh,
    private readonly live: LiveLists,
    private readonly mrtr: MrtrCalls,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const name = stringParam(params, 'name');
    let prompt = catalogOf(this.registry).extras.prompt(name);
    // a live upstream's prompts are in no snapshot: by prefix, from the caller's live list
    // (a live source the caller may not use is not asked with its credentials: denied as is)
    const liveOwner =
      prompt === undefined && this.live.active ? this.live.ownerOf(name) : undefined;
    const liveDenied = liveOwner !== undefined && !granted(context.access, liveOwner.id);
    if (prompt === undefined && this.live.active && !liveDenied)
      prompt = await this.live.promptFor(name, context);
    if (prompt === undefined || !granted(context.access, prompt.upstream.id)) {
      // Replicas' catalogs may briefly differ: one refresh before "unknown" (contract §8); a
      // prompt the caller may not use is answered as unknown after the same wait
      // (docs/operations.md §13 "Access"), so the two cannot be told apart
      await this.refresh.refreshForUnknownTool();
      prompt = liveDenied ? undefined : catalogOf(this.registry).extras.prompt(name);
      if (prompt !== undefined && !granted(context.access, prompt.upstream.id)) prompt = undefined;
    }
    if (prompt === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Invalid params: unknown prompt ${name.slice(0, 128)}`,
      );
    // an upstream's input_required (or a 2025 upstream's request to the client) goes through
    // the rounds and era bridging of a tool call (docs/operations.md §11 "Multi round-trip and
    // era bridging"; wire notes §4 "Applies to")
    return this.mrtr.call(
      {
        upstream: prompt.upstream,
        method: 'prompts/get',
        target: name,
        arguments: params?.arguments,
        params: { ...params, name: prompt.originalName },
      },
      context,
    );
  }
}
