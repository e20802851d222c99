import { Inject, Injectable, Optional } from '@nestjs/common';
import type { UpstreamDefinition } from '@app/config';
import { SourceCredentialError, SourceCredentials, type CallerIdentity } from '@app/identity';
import { UpstreamConnections, upstreamRequestHeaders } from '@app/upstream';
import type { IncomingHeaders } from './call-tool-result';

/**
 * The headers of a request an upstream gets on one caller's behalf (a call, a live list fetch,
 * a listen): its forwardHeaders and, by the upstream's authorization mode, the static value,
 * the caller's own token (passthrough) or the token exchanged for this upstream
 * (tokenExchange). Never used for session-level traffic, which carries the gateway's own
 * credential (docs/security.md, "Credentials towards sources: what travels where").
 */
@Injectable()
export class CallerRequestHeaders {
  constructor(
    @Optional()
    @Inject(SourceCredentials)
    private readonly credentials: SourceCredentials | null = null,
    @Optional()
    @Inject(UpstreamConnections)
    private readonly connections: UpstreamConnections | null = null,
  ) {}

  /** @throws SourceCredentialError when the exchanged token cannot be had */
  async for(
    upstream: UpstreamDefinition,
    incoming: IncomingHeaders,
    caller: CallerIdentity | undefined,
  ): Promise<Record<string, string>> {
    const auth = upstream.authorization;
    if (auth.mode !== 'tokenExchange') return upstreamRequestHeaders(upstream, incoming);
    if (this.credentials === null) throw new SourceCredentialError('token exchange is not set up');
    return upstreamRequestHeaders(
      upstream,
      incoming,
      // a registered upstream's token endpoint is reached through its guarded Agent
      await this.credentials.forCaller(auth, caller, this.connections?.guardedDispatcher(upstream)),
    );
  }
}
