import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { MrtrSeal } from '../sealing/mrtr-seal';

/** What an envelope is bound to: a retry must come for the same upstream, request and caller. */
export interface StateBinding {
  /** The upstream: its id and URL (bindingOf). */
  readonly upstream: string;
  /** The request: method, published name or URI, digest of the client's arguments (bindingOf). */
  readonly tool: string;
  /** sealedCallerKey() of the caller; null when the gateway runs without authentication. */
  readonly caller: string | null;
}

/**
 * What the envelope carries besides its binding:
 * - `relayed`: a 2026 upstream's own `requestState` (absent when it sent none, which a
 *   requestState-less round never produces), unwrapped before the retry is forwarded;
 * - `parked`: a 2025 upstream's call held by replica `owner` under `key`, waiting for the
 *   answers to its requests to the client (era bridging,
 *   docs/operations.md §11 "Multi round-trip and era bridging");
 * - `reissue`: a 2025 upstream's -32042 (URL elicitation required) asked as input_required: the
 *   retry sends the request again, as a 2025 client would once the URL was opened.
 */
export type EnvelopeContent =
  | { readonly kind: 'relayed'; readonly state: string }
  | { readonly kind: 'parked'; readonly owner: string; readonly key: string }
  | { readonly kind: 'reissue' };

/** An opened envelope: its content, and what one-time use is tracked by (SpentStates). */
export interface OpenedState {
  readonly content: EnvelopeContent;
  /** Random per envelope (absent in envelopes sealed before it existed). */
  readonly nonce?: string;
  /** When the envelope expires, ms since the epoch. */
  readonly expiresAt: number;
}

/** The sealed payload, short keys: it travels in every retry. */
interface EnvelopePayload {
  readonly exp: number;
  /** nonce: 9 random bytes, base64url (one-time use, wire notes §4). */
  readonly n: string;
  readonly u: string;
  readonly t: string;
  readonly c: string | null;
  readonly s?: string;
  readonly o?: string;
  readonly k?: string;
  /** reissue */
  readonly r?: 1;
}

function invalidState(reason: string): GatewayError {
  // -32602 for every era: the retry's params are invalid
  // (docs/operations.md §11 "Multi round-trip and era bridging"; wire notes §4)
  return new GatewayError(GatewayErrorCode.InvalidParams, `Invalid params: requestState ${reason}`);
}

/**
 * The gateway's integrity-protected `requestState` envelope
 * (docs/operations.md §11 "Multi round-trip and era bridging"; wire notes §4 "State and security"):
 * AEAD-sealed (MrtrSeal, keys from MCP_SESSION_KEYS), bound to the upstream id, the published tool
 * name and the caller, expiring after `mcp.session.requestStateTtlSeconds` (parked calls:
 * `pendingInputMillis`). The client sees an opaque string; the upstream never sees it.
 */
@Injectable()
export class RequestStateEnvelope {
  private readonly ttlMillis: number;

  constructor(
    private readonly seal: MrtrSeal,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ttlMillis = config.mcp.session.requestStateTtlSeconds * 1000;
  }

  /**
   * Seals `content` bound to `binding`.
   * @param ttlMillis lifetime in ms (default `requestStateTtlSeconds`)
   */
  wrap(binding: StateBinding, content: EnvelopeContent, ttlMillis = this.ttlMillis): string {
    const payload: EnvelopePayload = {
      exp: Date.now() + ttlMillis,
      n: randomBytes(9).toString('base64url'),
      u: binding.upstream,
      t: binding.tool,
      c: binding.caller,
      ...(content.kind === 'relayed'
        ? { s: content.state }
        : content.kind === 'parked'
          ? { o: content.owner, k: content.key }
          : { r: 1 as const }),
    };
    return this.seal.seal('request-state', payload);
  }

  /**
   * Opens a client's `requestState` and checks its binding.
   * @throws GatewayError InvalidParams (-32602) when it is not a string, tampered with,
   *   expired or sealed elsewhere, or bound to another upstream, request or caller
   */
  unwrap(token: unknown, expected: StateBinding): EnvelopeContent {
    return this.open(token, expected).content;
  }

  /** unwrap(), with the envelope's nonce and expiry for one-time use (SpentStates). */
  open(token: unknown, expected: StateBinding): OpenedState {
    const payload = this.seal.open('request-state', token);
    if (payload === undefined)
      throw invalidState('is not valid: tampered with, expired, or not issued by this gateway');
    const p = payload as Partial<EnvelopePayload>;
    if (p.u !== expected.upstream || p.t !== expected.tool || p.c !== expected.caller)
      throw invalidState(
        'was issued for another tool, prompt or resource, other arguments, another upstream or caller',
      );
    const use = {
      ...(typeof p.n === 'string' ? { nonce: p.n } : {}),
      expiresAt: typeof p.exp === 'number' ? p.exp : Date.now(),
    };
    if (typeof p.s === 'string') return { content: { kind: 'relayed', state: p.s }, ...use };
    if (typeof p.o === 'string' && typeof p.k === 'string')
      return { content: { kind: 'parked', owner: p.o, key: p.k }, ...use };
    if (p.r === 1) return { content: { kind: 'reissue' }, ...use };
    throw invalidState('is not valid');
  }
}
