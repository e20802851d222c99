import { Injectable } from '@nestjs/common';
import { CatalogRefresh, RegistryService } from '@app/registry';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import {
  RELAYING_REQUEST,
  SerializedResult,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type PreparedRequest,
} from '../methods/method-handler';
import { UpstreamRouter } from '../relay/upstream-router';
import { granted, grantedEntry, type Params } from '../relay/upstream-handler-support';
import { grantedResourceOwner } from '../relay/resource-owner';
import { LiveLists } from './live-lists.service';

/** MCP 2025-11-25 "Completion": a result holds at most 100 values. */
export const MAX_COMPLETION_VALUES = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An upstream's completion with more values than a result may hold, cut to the first
 * MAX_COMPLETION_VALUES with `hasMore: true` and its `total` (the upstream's, or the number it
 * sent); any other result as it came.
 */
function capped(result: object): object {
  const value =
    result instanceof SerializedResult ? result.value : (result as Record<string, unknown>);
  const completion = value.completion;
  if (
    !isRecord(completion) ||
    !Array.isArray(completion.values) ||
    completion.values.length <= MAX_COMPLETION_VALUES
  )
    return result;
  return {
    ...value,
    completion: {
      ...completion,
      values: completion.values.slice(0, MAX_COMPLETION_VALUES),
      total: typeof completion.total === 'number' ? completion.total : completion.values.length,
      hasMore: true,
    },
  };
}

/**
 * `completion/complete`: a `ref/prompt` goes to the prompt's upstream with its own name, a
 * `ref/resource` to the owner of the URI or template (docs/operations.md §10 "Routing"). An
 * answer of more than 100 values is cut to 100 (`hasMore`), as the spec bounds a result.
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
        return capped(
          await this.router.forward(
            prompt.upstream,
            this.method,
            { ...params, ref: { ...ref, name: prompt.originalName } },
            context,
          ),
        );
    } else if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      const uri = ref.uri;
      const owner = await grantedResourceOwner(this.registry, this.refresh, uri, context.access);
      if (owner !== undefined)
        return capped(await this.router.forward(owner, this.method, { ...params }, context));
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
