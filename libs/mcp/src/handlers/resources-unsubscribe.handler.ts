import { Injectable } from '@nestjs/common';
import { ResourceSubscriptionHandler } from './resource-subscription.handler';

/** `resources/unsubscribe`: to the owner of the URI (docs/operations.md §10 "Routing"). */
@Injectable()
export class ResourcesUnsubscribeHandler extends ResourceSubscriptionHandler {
  readonly method = 'resources/unsubscribe';
}
