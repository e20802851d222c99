import { Injectable } from '@nestjs/common';
import type { CatalogSnapshot } from '@app/registry';
import { CatalogListHandler } from './catalog-list.handler';

/** `resources/list`: the upstreams' resources, URIs unchanged (docs/operations.md §10 "Names"). */
@Injectable()
export class ResourcesListHandler extends CatalogListHandler {
  readonly method = 'resources/list';
  protected readonly key = 'resources';
  protected json(catalog: CatalogSnapshot): string {
    return catalog.extras.resourcesJson;
  }
}
