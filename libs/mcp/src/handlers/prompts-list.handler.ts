import { Injectable } from '@nestjs/common';
import type { CatalogSnapshot } from '@app/registry';
import { CatalogListHandler } from './catalog-list.handler';

/** `prompts/list`: the upstreams' prompts, names prefixed (docs/operations.md §10 "Names"). */
@Injectable()
export class PromptsListHandler extends CatalogListHandler {
  readonly method = 'prompts/list';
  protected readonly key = 'prompts';
  protected json(catalog: CatalogSnapshot): string {
    return catalog.extras.promptsJson;
  }
}
