import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, type Dispatcher } from 'undici';
import {
  AddressRules,
  GATEWAY_CONFIG,
  NO_ADDRESS_ALLOWANCES,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import { SourceCredentials } from '@app/identity';
import { Extension, gatewayVia, MCP_APP_MIME_TYPE } from '@app/wire';
import { registerPoolSize } from './http-exchange';
import { guardedConnector, type UpstreamAddressRefusedError } from './connect-guard';
import { UpstreamConnection } from './upstream-connection';
import { gatewayRequestHeaders } from './upstream-headers';
import {
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamProtocol,
  type UpstreamSignal,
} from './upstream-types';

/** How an upstream refuses a 2025 session (not a passing failure): it speaks 2026 only. */
const LEGACY_REFUSALS: ReadonlySet<string> = new Set(['era-mismatch', 'http-status', 'bad-answer']);
/**
 * The longest a 2025 client's request waits for a dual-era upstream's 2025 session to open, ms
 * (at most the request's own time): a handshake a healthy server answers at once. One that did
 * not open (no answer in time, unreachable) is not asked again for LEGACY_RETRY_MS, its 2025
 * clients' requests bridged meanwhile, so a server that hangs its 2025 initialize cannot hold
 * every 2025 client's request, request after request (docs/operations.md §10 "Eras").
 */
const LEGACY_HANDSHAKE_MILLIS = 5_000;
const LEGACY_RETRY_MS = 30_000;

/**
 * What the gateway declares towards every upstream as its client capabilities
 * (docs/operations.md §10 "Relaying", "Extensions"): it relays sampling, elicitation (form and
 * URL mode) and roots requests to the agent that made the call, and the agent's own answer (or
 * refusal, when that agent did not declare what the request needs) goes back to the upstream. It
 * declares the MCP Apps extension so that an upstream offers its app tools: the union of what
 * agents may use, one declaration set per upstream; an agent that did not declare the extension
 * is not given the tools only an app can call.
 */
export const GATEWAY_CLIENT_CAPABILITIES: Readonly<Record<string, unknown>> = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: {},
  extensions: { [Extension.ui]: { mimeTypes: [MCP_APP_MIME_TYPE] } },
};

/**
 * One UpstreamConnection per configured upstream per replica (docs/operations.md §10 "Eras"): the
 * 2025 session (or the detected 2026 era) is shared by the list pulls and every call, over one
 * undici Agent with keep-alive connections. Sessions are ended (DELETE) at shutdown. The session's
 * own traffic carries the gateway's credential for the upstream (gatewayRequestHeaders),
 * never the headers of the caller whose request happened to open or renew it.
 *
 * An upstream that is not in the boot configuration (a runtime registration, docs/operations.md
 * §15) gets an Agent of its own whose connector checks the address it dials against the
 * registration's address rules (connect-guard.ts): every request of it (list pulls, calls,
 * initialize, the GET stream, DELETE, listens) and its token endpoint go through that Agent,
 * so a name that answers another address after it was registered (DNS rebinding) is refused
 * at connect (docs/security.md, "Runtime registrations"). Configured upstreams share the plain
 * Agent: an operator may point them anywhere.
 */
@Injectable()
export class UpstreamConnections implements OnApplicationShutdown {
  private readonly logger = new Logger('Upstream');
  private readonly agent: Agent;
  /** The guarded Agent of each runtime-registered upstream, by id. */
  private readonly guarded = new Map<string, Agent>();
  private readonly configuredIds: ReadonlySet<string>;
  private readonly rules: AddressRules;
  /** The last refusal logged per upstream (message, when), so a flood of calls logs once a minute. */
  private readonly lastRefusal = new Map<string, { message: string; at: number }>();
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly unsolicited: ((upstreamId: string, message: JsonRpcMessage) => void)[] = [];
  private readonly renewed: ((upstreamId: string) => void)[] = [];
  /**
   * The 2025 session of a dual-era `auto` upstream, by id, for 2025 clients (forClientEra);
   * 'none' once the upstream refused 2025.
   */
  private readonly legacySessions = new Map<string, UpstreamConnection | 'none'>();
  /** When a dual-era upstream whose 2025 session did not open is asked for one again (ms). */
  private readonly legacyRetryAt = new Map<string, number>();
  /**
   * The registration each runtime-registered upstream is applied from now (`admit`), by id: a
   * definition of an earlier registration of the id (a call that started before a DELETE, a
   * PATCH or a re-registration) gets no connection (`get`), so nothing of it (its requests,
   * retries, answers, credential) reaches the registration that holds the id since, nor does
   * the new one inherit its connection (docs/operations.md §15 "Deleted means gone").
   */
  private readonly admitted = new Map<string, string>();

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional()
    @Inject(SourceCredentials)
    private readonly credentials: SourceCredentials | null = null,
  ) {
    this.agent = new Agent(this.agentOptions());
    registerPoolSize(this.agent, config.mcp.execution.maxConnectionsPerOrigin);
    this.configuredIds = new Set(config.upstreams.map((u) => u.id));
    this.rules = new AddressRules(config.admin ?? NO_ADDRESS_ALLOWANCES);
  }

  private agentOptions(): Agent.Options {
    return {
      connections: this.config.mcp.execution.maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
      // each request has its own deadline; the agent's own timers must not cut SSE answers
      headersTimeout: 0,
      bodyTimeout: 0,
    };
  }

  /**
   * The guarded Agent of a runtime-registered upstream (created on first use), which every
   * request for it goes through, its token endpoint's included; undefined for a configured
   * upstream (its requests share the plain Agent, its token requests use fetch's own pool).
   */
  guardedDispatcher(upstream: Pick<UpstreamDefinition, 'id'>): Dispatcher | undefined {
    const id = upstream.id;
    if (this.configuredIds.has(id)) return undefined;
    let agent = this.guarded.get(id);
    if (agent === undefined) {
      agent = new Agent({
        ...this.agentOptions(),
        connect: guardedConnector(this.rules, (err) => this.refused(id, err)),
      });
      registerPoolSize(agent, this.config.mcp.execution.maxConnectionsPerOrigin);
      this.guarded.set(id, agent);
    }
    return agent;
  }

  /** The log line of a refused connect: named, with the host and address (never on /mcp). */
  private refused(upstreamId: string, err: UpstreamAddressRefusedError): void {
    const now = performance.now();
    const last = this.lastRefusal.get(upstreamId);
    if (last !== undefined && last.message === err.message && now - last.at < 60_000) return;
    this.lastRefusal.set(upstreamId, { message: err.message, at: now });
    this.logger.warn(
      `Registered upstream ${upstreamId}: connection refused (UpstreamAddressRefusedError): ` +
        `${err.message}; nothing was sent (docs/security.md, "Runtime registrations")`,
    );
  }

  /**
   * The registration `upstream` (a runtime-registered one's definition) is applied from, from
   * now on: before it is put in the registry, after the previous one of its id was released.
   */
  admit(upstream: UpstreamDefinition): void {
    if (upstream.registration !== undefined) this.admitted.set(upstream.id, upstream.registration);
  }

  /**
   * The connection of this upstream, created on first use.
   * @throws UpstreamFailure `removed` for a definition of a registration that is not the one
   *   applied now (deleted, changed or registered again since): nothing is sent.
   */
  get(upstream: UpstreamDefinition): UpstreamConnection {
    if (
      upstream.registration !== undefined &&
      this.admitted.get(upstream.id) !== upstream.registration
    )
      throw new UpstreamFailure(
        'removed',
        'the registration this request was made for was deleted or replaced since; nothing was sent',
      );
    let connection = this.connections.get(upstream.id);
    if (connection === undefined) {
      connection = this.create(upstream, upstream.protocol);
      this.connections.set(upstream.id, connection);
    }
    return connection;
  }

  /**
   * The connection a request of a client of `clientEra` goes on (docs/operations.md §10 "Eras"):
   * the upstream's own, except for a 2025 client's request to an `auto` upstream that answers
   * in 2026 and also speaks 2025 (a dual-era server, as the official conformance reference
   * server is). That request goes on a 2025 session of its own, opened at the first such
   * request, so that what only 2025 has (logging/setLevel, resources/subscribe, an upstream's
   * requests to the client on the call's stream) works as the server means it instead of being
   * bridged. An upstream that refuses 2025 is remembered and bridged as before; one that cannot
   * be reached for it now is bridged this time and tried again later. Synchronous unless a
   * connection must first learn its era.
   */
  forClientEra(
    upstream: UpstreamDefinition,
    clientEra: '2025' | '2026' | undefined,
    deadlineMillis: number,
    signal?: UpstreamSignal,
  ): UpstreamConnection | Promise<UpstreamConnection> {
    const main = this.get(upstream);
    if (clientEra !== '2025' || upstream.protocol !== 'auto' || main.era === '2025') return main;
    const known = this.legacySessions.get(upstream.id);
    if (known === 'none') return main;
    if (main.era === '2026' && known?.era === '2025') return known;
    if (main.era === '2026' && (this.legacyRetryAt.get(upstream.id) ?? 0) > Date.now()) return main;
    return this.legacyFor(upstream, main, deadlineMillis, signal);
  }

  private async legacyFor(
    upstream: UpstreamDefinition,
    main: UpstreamConnection,
    deadlineMillis: number,
    signal: UpstreamSignal | undefined,
  ): Promise<UpstreamConnection> {
    if (main.era === undefined) {
      try {
        await main.connect({ deadlineMillis, signal });
      } catch {
        return main; // its own request says why
      }
    }
    if (main.era !== '2026') return main;
    let legacy = this.legacySessions.get(upstream.id);
    if (legacy === 'none') return main;
    if (legacy === undefined) {
      legacy = this.create(upstream, '2025-11-25');
      this.legacySessions.set(upstream.id, legacy);
    }
    try {
      await legacy.connect({
        deadlineMillis: Math.min(deadlineMillis, LEGACY_HANDSHAKE_MILLIS),
        signal,
      });
      this.legacyRetryAt.delete(upstream.id);
      return legacy;
    } catch (err) {
      // bridged this time, and for LEGACY_RETRY_MS unless it refused 2025 (then for good);
      // the caller's own cancellation says nothing of the upstream
      if (!(err instanceof UpstreamFailure && err.kind === 'cancelled'))
        this.legacyRetryAt.set(upstream.id, Date.now() + LEGACY_RETRY_MS);
      if (err instanceof UpstreamFailure && LEGACY_REFUSALS.has(err.kind)) {
        if (this.legacySessions.get(upstream.id) === legacy) {
          this.legacySessions.set(upstream.id, 'none');
          this.logger.log(
            `Upstream ${upstream.id}: speaks 2026-07-28 only (${err.message}); 2025 clients' requests are bridged`,
          );
        }
        void legacy.close();
      }
      return main;
    }
  }

  /**
   * The connection an answer to an upstream's request to the client goes back on: the 2025
   * session that asked (a 2026 session never asks).
   */
  forAnswer(upstream: UpstreamDefinition): UpstreamConnection {
    return this.sessionOf(upstream);
  }

  /**
   * The connection of the gateway's 2025 session with the upstream, where what a 2025 session
   * holds lives (resources/subscribe, the log level): the upstream's own, or the second session
   * of a dual-era `auto` upstream (forClientEra) while its own answers in 2026.
   */
  sessionOf(upstream: UpstreamDefinition): UpstreamConnection {
    const legacy = this.legacySessions.get(upstream.id);
    const main = this.get(upstream);
    return main.era === '2026' && legacy !== undefined && legacy !== 'none' ? legacy : main;
  }

  private create(upstream: UpstreamDefinition, protocol: UpstreamProtocol): UpstreamConnection {
    const connection = new UpstreamConnection(
      {
        id: upstream.id,
        url: upstream.url,
        protocol,
        connectMillis: upstream.connectMillis,
        maxAnswerBytes: this.config.mcp.execution.maxResponseBytes,
        clientInfo: { name: this.config.mcp.identity, version: this.config.version },
        via: gatewayVia(this.config.mcp.identity),
        clientCapabilities: GATEWAY_CLIENT_CAPABILITIES,
        sessionHeaders: () => this.sessionHeaders(upstream),
      },
      this.guardedDispatcher(upstream) ?? this.agent,
    );
    const id = upstream.id;
    connection.onUnsolicited((message) => {
      for (const listener of this.unsolicited) listener(id, message);
    });
    connection.onRenewed(() => {
      for (const listener of this.renewed) listener(id);
    });
    return connection;
  }

  /** The gateway's own headers for this upstream's session (its client-credentials token cached). */
  private async sessionHeaders(upstream: UpstreamDefinition): Promise<Record<string, string>> {
    const auth = upstream.authorization;
    if (auth.mode !== 'tokenExchange') return gatewayRequestHeaders(upstream);
    if (this.credentials === null) throw new Error('token exchange is not set up');
    return gatewayRequestHeaders(
      upstream,
      await this.credentials.forGateway(auth, this.guardedDispatcher(upstream)),
    );
  }

  /**
   * Ends and forgets the connection of an upstream removed or changed at runtime
   * (docs/operations.md §15): its 2025 session is ended (DELETE, bounded); the next `get` connects
   * afresh, to the definition's URL of that time. Never throws.
   */
  async release(upstreamId: string): Promise<void> {
    const connection = this.connections.get(upstreamId);
    const legacy = this.legacySessions.get(upstreamId);
    const agent = this.guarded.get(upstreamId);
    // all forgotten at once, before anything is awaited: a connection made meanwhile (the next
    // registration of the id) starts afresh, on an Agent of its own, and no definition of the
    // released registration gets one (`get`)
    this.connections.delete(upstreamId);
    this.legacySessions.delete(upstreamId);
    this.legacyRetryAt.delete(upstreamId);
    this.guarded.delete(upstreamId);
    this.lastRefusal.delete(upstreamId);
    this.admitted.delete(upstreamId);
    // the DELETEs of the sessions go through the upstream's own Agent: closed after them
    await Promise.all([
      legacy !== undefined && legacy !== 'none' ? legacy.close().catch(() => undefined) : undefined,
      connection?.close().catch(() => undefined),
    ]);
    await agent?.close().catch(() => undefined);
  }

  /**
   * Listens to messages upstreams send outside any request (the 2025 standalone GET stream):
   * list_changed notifications, resource updates.
   */
  onUnsolicited(listener: (upstreamId: string, message: JsonRpcMessage) => void): void {
    this.unsolicited.push(listener);
  }

  /**
   * Listens for an upstream's 2025 session replaced by a new one (UpstreamConnection.onRenewed),
   * with the upstream's id: what the old session held at the upstream is to be told again.
   */
  onSessionRenewed(listener: (upstreamId: string) => void): void {
    this.renewed.push(listener);
  }

  /** Ends every 2025 session (DELETE, bounded), then closes the connection pool. */
  async onApplicationShutdown(): Promise<void> {
    const legacy = [...this.legacySessions.values()].filter(
      (c): c is UpstreamConnection => c !== 'none',
    );
    await Promise.allSettled([...this.connections.values(), ...legacy].map((c) => c.close()));
    this.connections.clear();
    this.legacySessions.clear();
    const agents = [this.agent, ...this.guarded.values()];
    this.guarded.clear();
    const closed = await Promise.allSettled(agents.map((a) => a.close()));
    for (const result of closed)
      if (result.status === 'rejected') {
        const err: unknown = result.reason;
        this.logger.warn(
          `Closing upstream connections failed (${err instanceof Error ? err.name : typeof err})`,
        );
      }
  }
}
