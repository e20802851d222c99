import { Injectable } from '@nestjs/common';
import { ResourceSubscriptionHandler } from './resource-subscription.handler';

/** `resources/subscribe`: to the owner of the URI (docs/operations.md §10 "Routing"). */
@Injectable()
export class ResourcesSubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/subscribe';
}
