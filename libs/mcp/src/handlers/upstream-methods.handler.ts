import { Injectable } from '@nestjs/common';
import type { UpstreamDefinition } from '@app/config';
import { allowsSource, type CallerAccess } from '@app/identity';
import { CatalogRefresh, RegistryService, type CatalogSnapshot } from '@app/registry';
import { callerListJson } from './caller-lists';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import {
  PreSerialized,
  RELAYING_REQUEST,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
  type PreparedRequest,
} from './method-handler';
import { LiveLists } from './live-lists.service';
import { partialSourcesMember } from './partial-sources';
import { REGISTRY_UNAVAILABLE_MESSAGE } from './tools-list.handler';
import { UpstreamRouter } from './upstream-router';
import { MrtrCalls } from '../mrtr/mrtr-calls.service';
import type { MrtrMethod } from '../mrtr/upstream-mrtr-request';

type Params = Readonly<Record<string, unknown>> | undefined;

function catalogOf(registry: RegistryService): CatalogSnapshot {
  const catalog = registry.current();
  if (catalog === undefined)
    throw new GatewayError(GatewayErrorCode.RegistryUnavailable, REGISTRY_UNAVAILABLE_MESSAGE);
  return catalog;
}

/**
 * Whether the caller may use this upstream (docs/operations.md §13 "Access"); no access given: yes.
 */
function granted(access: CallerAccess | undefined, upstreamId: string): boolean {
  return access === undefined || allowsSource(access, upstreamId);
}

/**
 * Forwards a `prompts/get` or `resources/read` through MrtrCalls: an upstream's
 * input_required (or a 2025 upstream's request to the client) goes through the same rounds
 * and era bridging as a tool call's (docs/operations.md §11 "Multi round-trip and era bridging";
 * wire notes §4 "Applies to").
 */
function forwardRounds(
  mrtr: MrtrCalls,
  router: UpstreamRouter,
  upstream: UpstreamDefinition,
  method: MrtrMethod,
  target: string,
  params: Record<string, unknown>,
  context: MethodContext,
): Promise<MethodResult> {
  return mrtr.call(
    {
      upstream,
      method,
      target,
      arguments: params.arguments,
      params,
      send: (sent, roundContext, onRequest) =>
        router.forward(upstream, method, sent, roundContext, undefined, undefined, onRequest),
    },
    context,
  );
}

function noCursor(params: Params): void {
  if (params?.cursor !== undefined)
    throw new GatewayError(
      GatewayErrorCode.InvalidParams,
      'Invalid cursor: this server returns every entry in one page',
    );
}

function stringParam(params: Params, name: string): string {
  const value = params?.[name];
  if (typeof value !== 'string' || value === '')
    throw new GatewayError(
      GatewayErrorCode.InvalidParams,
      `Invalid params: params.${name} must be a non-empty string`,
    );
  return value;
}

/**
 * A list served from the catalog: one page, sorted, serialized once per catalog
 * (docs/operations.md §10 "Names", "Partial lists").
 */
@Injectable()
abstract class CatalogListHandler implements MethodHandler {
  abstract readonly method: string;
  protected abstract readonly key: 'prompts' | 'resources' | 'resourceTemplates';
  protected abstract json(catalog: CatalogSnapshot): string;

  constructor(
    protected readonly registry: RegistryService,
    private readonly live: LiveLists,
  ) {}

  // async: a thrown GatewayError becomes the rejection the codec answers with
  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    noCursor(params);
    const catalog = catalogOf(this.registry);
    // lists: live upstreams: built per request for the caller (docs/operations.md §11 "Live lists")
    if (this.live.active) return this.live.list(this.method, catalog, context);
    const access = context.access;
    return new PreSerialized([
      `{"${this.key}":`,
      // docs/operations.md §13 "Access": only the granted sources' entries for a restricted caller
      access === undefined || access.all
        ? this.json(catalog)
        : callerListJson(catalog, this.key, access),
      partialSourcesMember(this.registry.partialSources(), access),
      '}',
    ]);
  }
}

/** `prompts/list`: the upstreams' prompts, names prefixed (docs/operations.md §10 "Names"). */
@Injectable()
export class PromptsListHandler extends CatalogListHandler {
  readonly method = 'prompts/list';
  protected readonly key = 'prompts';
  protected json(catalog: CatalogSnapshot): string {
    return catalog.extras.promptsJson;
  }
}

/** `resources/list`: the upstreams' resources, URIs unchanged (docs/operations.md §10 "Names"). */
@Injectable()
export class ResourcesListHandler extends CatalogListHandler {
  readonly method = 'resources/list';
  protected readonly key = 'resources';
  protected json(catalog: CatalogSnapshot): string {
    return catalog.extras.resourcesJson;
  }
}

/**
 * `resources/templates/list`: the upstreams' resource templates (docs/operations.md §10 "Names").
 */
@Injectable()
export class ResourceTemplatesListHandler extends CatalogListHandler {
  readonly method = 'resources/templates/list';
  protected readonly key = 'resourceTemplates';
  protected json(catalog: CatalogSnapshot): string {
    return catalog.extras.resourceTemplatesJson;
  }
}

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
    private readonly router: UpstreamRouter,
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
    // a prompt the caller may not use: answered as unknown, without a refresh
    // (docs/operations.md §13 "Access")
    if (prompt !== undefined && !granted(context.access, prompt.upstream.id)) prompt = undefined;
    else if (prompt === undefined && !liveDenied) {
      // Replicas' catalogs may briefly differ: one refresh before "unknown" (contract §8).
      await this.refresh.refreshForUnknownTool();
      prompt = catalogOf(this.registry).extras.prompt(name);
      if (prompt !== undefined && !granted(context.access, prompt.upstream.id)) prompt = undefined;
    }
    if (prompt === undefined)
      throw new GatewayError(
        GatewayErrorCode.InvalidParams,
        `Invalid params: unknown prompt ${name.slice(0, 128)}`,
      );
    return forwardRounds(
      this.mrtr,
      this.router,
      prompt.upstream,
      'prompts/get',
      name,
      { ...params, name: prompt.originalName },
      context,
    );
  }
}

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
    private readonly router: UpstreamRouter,
    private readonly mrtr: MrtrCalls,
  ) {}

  handle(params: Params, context: MethodContext): Promise<MethodResult> {
    const uri = stringParam(params, 'uri');
    const owner = catalogOf(this.registry).extras.resourceOwner(uri);
    if (owner === undefined || !granted(context.access, owner.id))
      return Promise.reject(
        new GatewayError(
          GatewayErrorCode.InvalidParams,
          `Resource not found: ${uri.slice(0, 256)}`,
          { uri },
        ),
      );
    return forwardRounds(
      this.mrtr,
      this.router,
      owner,
      'resources/read',
      uri,
      { ...params },
      context,
    );
  }
}

/**
 * `resources/subscribe` and `resources/unsubscribe`: to the owner of the URI
 * (docs/operations.md §10 "Routing").
 */
@Injectable()
abstract class ResourceSubscriptionHandler implements MethodHandler {
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

@Injectable()
export class ResourcesSubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/subscribe';
}

@Injectable()
export class ResourcesUnsubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/unsubscribe';
}

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

/**
 * `logging/setLevel`: forwarded to every upstream that offers logging
 * (docs/operations.md §10 "Routing"); `{}` once they have all answered, whatever they answered (a
 * level is a wish, not a contract).
 */
@Injectable()
export class LoggingSetLevelHandler implements MethodHandler {
  readonly method = 'logging/setLevel';

  constructor(
    private readonly registry: RegistryService,
    private readonly router: UpstreamRouter,
  ) {}

  async handle(params: Params, context: MethodContext): Promise<MethodResult> {
    stringParam(params, 'level');
    const upstreams = (this.registry.current()?.extras.upstreamsWith('logging') ?? []).filter((u) =>
      granted(context.access, u.id),
    );
    await Promise.allSettled(
      upstreams.map((u) => this.router.forward(u, this.method, { ...params }, context)),
    );
    return {};
  }
}
