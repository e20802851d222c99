import { Injectable } from '@nestjs/common';
import { RegistryService } from '@app/registry';
import type { MethodContext, MethodHandler, MethodResult } from './method-handler';
import { UpstreamRouter } from './upstream-router';
import { granted, stringParam, type Params } from './upstream-handler-support';

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
