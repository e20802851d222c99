import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Agent } from 'undici';
import { GATEWAY_CONFIG, type GatewayConfig, type UpstreamDefinition } from '@app/config';
import { SourceCredentials } from '@app/identity';
import { UpstreamConnection } from './upstream-connection';
import { gatewayRequestHeaders } from './upstream-headers';
import type { JsonRpcMessage } from './upstream-types';

/**
 * What the gateway declares towards every upstream as its client capabilities (issue 10 §5):
 * it relays sampling, elicitation and roots requests to the agent that made the call, and the
 * agent's own answer (or refusal) goes back to the upstream.
 */
export const GATEWAY_CLIENT_CAPABILITIES: Readonly<Record<string, unknown>> = {
  sampling: {},
  elicitation: { form: {} },
  roots: {},
};

/**
 * One UpstreamConnection per configured upstream per replica (issue 10 §2): the 2025 session
 * (or the detected 2026 era) is shared by the list pulls and every call, over one undici
 * Agent with keep-alive connections. Sessions are ended (DELETE) at shutdown. The session's
 * own traffic carries the gateway's credential for the upstream (gatewayRequestHeaders),
 * never the headers of the caller whose request happened to open or renew it.
 */
@Injectable()
export class UpstreamConnections implements OnApplicationShutdown {
  private readonly logger = new Logger('Upstream');
  private readonly agent: Agent;
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly unsolicited: ((upstreamId: string, message: JsonRpcMessage) => void)[] = [];

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional()
    @Inject(SourceCredentials)
    private readonly credentials: SourceCredentials | null = null,
  ) {
    this.agent = new Agent({
      connections: config.mcp.execution.maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
      // each request has its own deadline; the agent's own timers must not cut SSE answers
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** The connection of this upstream, created on first use. */
  get(upstream: UpstreamDefinition): UpstreamConnection {
    let connection = this.connections.get(upstream.id);
    if (connection === undefined) {
      connection = new UpstreamConnection(
        {
          id: upstream.id,
          url: upstream.url,
          protocol: upstream.protocol,
          connectMillis: upstream.connectMillis,
          maxAnswerBytes: this.config.mcp.execution.maxResponseBytes,
          clientInfo: { name: this.config.mcp.identity, version: this.config.version },
          clientCapabilities: GATEWAY_CLIENT_CAPABILITIES,
          sessionHeaders: () => this.sessionHeaders(upstream),
        },
        this.agent,
      );
      const id = upstream.id;
      connection.onUnsolicited((message) => {
        for (const listener of this.unsolicited) listener(id, message);
      });
      this.connections.set(upstream.id, connection);
    }
    return connection;
  }

  /** The gateway's own headers for this upstream's session (its client-credentials token cached). */
  private async sessionHeaders(upstream: UpstreamDefinition): Promise<Record<string, string>> {
    const auth = upstream.authorization;
    if (auth.mode !== 'tokenExchange') return gatewayRequestHeaders(upstream);
    if (this.credentials === null) throw new Error('token exchange is not set up');
    return gatewayRequestHeaders(upstream, await this.credentials.forGateway(auth));
  }

  /**
   * Ends and forgets the connection of an upstream removed or changed at runtime (issue 13):
   * its 2025 session is ended (DELETE, bounded); the next `get` connects afresh, to the
   * definition's URL of that time. Never throws.
   */
  async release(upstreamId: string): Promise<void> {
    const connection = this.connections.get(upstreamId);
    if (connection === undefined) return;
    this.connections.delete(upstreamId);
    await connection.close().catch(() => undefined);
  }

  /**
   * Listens to messages upstreams send outside any request (the 2025 standalone GET stream):
   * list_changed notifications, resource updates.
   */
  onUnsolicited(listener: (upstreamId: string, message: JsonRpcMessage) => void): void {
    this.unsolicited.push(listener);
  }

  /** Ends every 2025 session (DELETE, bounded), then closes the connection pool. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.connections.values()].map((c) => c.close()));
    this.connections.clear();
    await this.agent.close().catch((err: unknown) => {
      this.logger.warn(
        `Closing upstream connections failed (${err instanceof Error ? err.name : typeof err})`,
      );
    });
  }
}
