import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { bindingFields, boundTo, type AnswerBinding } from './answer-binding';

/** Where a relayed server->client request came from: enough to route the client's answer back. */
export interface RelayOrigin {
  /** The upstream id. */
  readonly upstream: string;
  /** The runtime registration of the upstream that asked (UpstreamDefinition.registration). */
  readonly registration?: string;
  /** The upstream session the request arrived on (2025), if any. */
  readonly session?: string;
  /** The upstream's own request id. */
  readonly id: string | number;
}

/** What a client's answer id opened to. */
export type OpenedRelayId =
  | { readonly kind: 'origin'; readonly origin: RelayOrigin }
  | { readonly kind: 'other-caller' }
  | { readonly kind: 'other-session' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'foreign' };

/** The sealed payload, short keys (it travels to the client and back). */
interface RelayPayload {
  readonly exp: number;
  readonly u: string;
  readonly r?: string;
  readonly s?: string;
  readonly i: string | number;
  readonly c: string | null;
  readonly g: string | null;
  /** The client's 2025 session (AnswerBinding.session), when it had one. */
  readonly cs?: string;
}

/**
 * The ids of server->client requests relayed to an agent (docs/operations.md §10 "Relaying"): the
 * upstream's `sampling/createMessage`, `elicitation/create` or `roots/list` goes to the agent under
 * an id that carries, sealed (MrtrSeal `relay-id`: AES-256-GCM, keys from MCP_SESSION_KEYS with
 * rotation, the gateway identity authenticated), the upstream (its runtime registration too), its session and its request
 * id, bound to the caller whose call asked and its grant, expiring after
 * `session.pendingInputMillis` (docs/security.md "Answers to relayed requests"). The agent's
 * answer may reach any replica: each opens the id, checks that the answering caller is the
 * one it was issued to, and posts the answer to the right upstream session.
 */
@Injectable()
export class RelayIds {
  /** How long a relay id may be answered: `session.pendingInputMillis`. */
  readonly ttlMillis: number;

  constructor(
    private readonly sealer: MrtrSeal,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ttlMillis = config.mcp.session.pendingInputMillis;
  }

  seal(origin: RelayOrigin, binding: AnswerBinding): string {
    const payload: RelayPayload = {
      exp: Date.now() + this.ttlMillis,
      u: origin.upstream,
      ...(origin.registration === undefined ? {} : { r: origin.registration }),
      ...(origin.session === undefined ? {} : { s: origin.session }),
      i: origin.id,
      ...bindingFields(binding),
    };
    return this.sealer.seal('relay-id', payload);
  }

  /**
   * The origin sealed in a relay id, for the answering caller `binding`: `foreign` for an id of
   * the relay form that does not open (forged, altered, sealed by another gateway identity or
   * with a key not configured here); undefined for any other id.
   */
  open(id: unknown, binding: AnswerBinding): OpenedRelayId | undefined {
    const content = this.sealer.inspect('relay-id', id);
    if (content === undefined || content.kind !== 'open') return content;
    const p = content.payload as Partial<RelayPayload>;
    if (typeof p.u !== 'string' || (typeof p.i !== 'string' && typeof p.i !== 'number'))
      return { kind: 'foreign' };
    const bound = boundTo(content.payload, binding);
    if (bound !== 'bound') return { kind: bound };
    return {
      kind: 'origin',
      origin: {
        upstream: p.u,
        ...(typeof p.r === 'string' ? { registration: p.r } : {}),
        ...(typeof p.s === 'string' ? { session: p.s } : {}),
        id: p.i,
      },
    };
  }
}
