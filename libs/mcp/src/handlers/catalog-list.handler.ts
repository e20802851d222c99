import { Injectable } from '@nestjs/common';
import { RegistryService, type CatalogSnapshot } from '@app/registry';
import { callerListJson } from '../servers/caller-lists';
import {
  PreSerialized,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
} from '../methods/method-handler';
import { LiveLists } from './live-lists.service';
import { partialSourcesMember } from './partial-sources';
import { catalogOf, noCursor, type Params } from '../relay/upstream-handler-support';

/**
 * A list served from the catalog: one page, sorted, serialized once per catalog
 * (docs/operations.md §10 "Names", "Partial lists").
 */
@Injectable()
export abstract class CatalogListHandler implements MethodHandler {
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
