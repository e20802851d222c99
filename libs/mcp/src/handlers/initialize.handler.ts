import { Injectable } from '@nestjs/common';
import { LEGACY_PROTOCOL_VERSIONS } from '@app/wire';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { VirtualServers } from '../servers/virtual-servers.service';
import { relayedCapabilities, SessionTokenService } from '../session/session-token.service';
import { SessionOpened, type MethodContext, type MethodHandler } from '../methods/method-handler';
import { ServerCapabilities } from '../servers/server-capabilities';

/**
 * `initialize` (2025 lifecycle): echoes a supported version, else offers the latest, and mints
 * the sealed Mcp-Session-Id bound to the caller (none in stateless mode: the spec lets a server
 * issue none). The 2025 codec serves it before any session check (the method table's
 * `opensSession`).
 */
@Injectable()
export class InitializeHandler implements MethodHandler {
  readonly method = 'initialize';
  /** Not counted (docs/operations.md §14 "Rate limits per caller"). */
  readonly rateLimit = 'none';

  constructor(
    private readonly sessions: SessionTokenService,
    private readonly capabilities: ServerCapabilities,
    private readonly servers: VirtualServers,
  ) {}

  handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<SessionOpened> {
    const requested = params?.protocolVersion;
    if (typeof requested !== 'string')
      return Promise.reject(
        new GatewayError(
          GatewayErrorCode.InvalidParams,
          'Invalid params: initialize needs params.protocolVersion (a string)',
        ),
      );
    const protocolVersion = (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
      ? requested
      : LEGACY_PROTOCOL_VERSIONS[0];
    // the gateway's identity, or the virtual server's of the path (docs/operations.md §16)
    const identity = this.servers.identityOf(context.server);
    const result = {
      protocolVersion,
      // list changes reach a 2025 client on its session's GET stream: only with sealed sessions
      capabilities: this.capabilities.current(context.access, this.sessions.sealed),
      serverInfo: identity.serverInfo,
      ...(identity.instructions === undefined ? {} : { instructions: identity.instructions }),
    };
    return Promise.resolve(
      new SessionOpened(
        result,
        this.sessions.sealed
          ? this.sessions.issue(
              protocolVersion,
              undefined,
              relayedCapabilities(params?.capabilities),
              context.caller,
            )
          : undefined,
      ),
    );
  }
}
