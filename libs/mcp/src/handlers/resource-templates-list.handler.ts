import { Injectable } from '@nestjs/common';
import type { CatalogSnapshot } from '@app/registry';
import { CatalogListHandler } from './catalog-list.handler';

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
