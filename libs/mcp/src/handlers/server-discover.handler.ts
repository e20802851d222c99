import { Injectable } from '@nestjs/common';
import { MODERN_PROTOCOL_VERSIONS } from '@app/wire';
import { VirtualServers } from '../servers/virtual-servers.service';
import type { MethodContext, MethodHandler } from '../methods/method-handler';
import { ServerCapabilities } from '../servers/server-capabilities';

/**
 * `server/discover` (2026-07-28; wire notes §2.1): the versions this gateway speaks, the
 * capabilities merged over the sources the caller may use, and the instructions of the
 * gateway or of the virtual server of the path. The 2026 codec adds the cache hints (the
 * method table's `cacheHints`) and `serverInfo`.
 */
@Injectable()
export class ServerDiscoverHandler implements MethodHandler {
  readonly method = 'server/discover';
  /** Not counted (docs/operations.md §14 "Rate limits per caller"). */
  readonly rateLimit = 'none';

  constructor(
    private readonly capabilities: ServerCapabilities,
    private readonly servers: VirtualServers,
  ) {}

  handle(_params: unknown, context: MethodContext): Promise<object> {
    const identity = this.servers.identityOf(context.server);
    return Promise.resolve({
      // first, as the 2026 SDKs write it; the codec keeps a result's own resultType in place
      resultType: 'complete',
      supportedVersions: MODERN_PROTOCOL_VERSIONS,
      capabilities: this.capabilities.current(context.access, true, true),
      ...(identity.instructions === undefined ? {} : { instructions: identity.instructions }),
    });
  }
}
