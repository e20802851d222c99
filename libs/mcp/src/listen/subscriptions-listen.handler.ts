import { Injectable } from '@nestjs/common';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { StreamedResult, type MethodContext, type MethodHandler } from '../methods/method-handler';
import { SubscriptionsListen } from './subscriptions-listen.service';

/**
 * `subscriptions/listen` (2026-07-28; wire notes §2.8): opens the caller's notification stream
 * (SubscriptionsListen), answered as that stream.
 */
@Injectable()
export class SubscriptionsListenHandler implements MethodHandler {
  readonly method = 'subscriptions/listen';
  /** Not counted (docs/operations.md §14); the streams have caps of their own (§11). */
  readonly rateLimit = 'none';

  constructor(private readonly listen: SubscriptionsListen) {}

  handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<StreamedResult> {
    const { id } = context;
    // the stream's subscription id is the request's id: both codecs set it on every request
    if (id === undefined)
      return Promise.reject(new GatewayError(GatewayErrorCode.Internal, 'Internal error'));
    // open throws its refusals (a bad filter, no room): this request's error, not a crash
    return Promise.resolve().then(
      () =>
        new StreamedResult(
          this.listen.open({
            id,
            params,
            headers: context.headers,
            signal: context.signal,
            caller: context.caller,
            credential: context.credential,
            access: context.access,
            server: context.server,
          }),
        ),
    );
  }
}
