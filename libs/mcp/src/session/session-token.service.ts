import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig, type SessionKey } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import { Extension } from '@app/wire';
import { callerDigest } from './caller-key';

/** What a legacy-era session carries; everything the gateway needs lives in the token itself. */
export interface SessionClaims {
  /** Negotiated protocol version. */
  readonly protocolVersion: string;
  /** Issued at, seconds since the epoch. */
  readonly issuedAt: number;
  /** Expires at, seconds since the epoch. */
  readonly expiresAt: number;
  /**
   * The client capabilities the client declared at initialize that the gateway relays for
   * (`sampling`, `elicitation`, `roots`; docs/operations.md §10 "Relaying"); undefined for a
   * session sealed before they were recorded.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /**
   * callerDigest of the caller that opened the session (mode jwt); a request on the session by
   * another caller does not open it (docs/security.md). undefined: opened without a caller
   * (auth off) or sealed before sessions recorded it; such a session opens for no caller.
   */
  readonly callerDigest?: string;
}

/** The client capabilities a session records: those a relayed upstream request may need. */
export const RELAYED_CLIENT_CAPABILITIES = ['sampling', 'elicitation', 'roots'] as const;

interface SealedPayload {
  readonly pv: string;
  readonly iat: number;
  readonly exp: number;
  readonly cc?: Record<string, unknown>;
  /** callerDigest of the opener. */
  readonly cb?: string;
}

/**
 * The subset of declared client capabilities a session keeps (small: it travels in every
 * session id): what relayed requests need, and the extensions.
 */
export function relayedCapabilities(declared: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof declared !== 'object' || declared === null) return out;
  for (const name of RELAYED_CLIENT_CAPABILITIES) {
    const value = (declared as Record<string, unknown>)[name];
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      // sub-objects are kept only one level deep (e.g. elicitation.form), bounded in size
      const text = JSON.stringify(value);
      out[name] = text.length <= 256 ? (JSON.parse(text) as unknown) : {};
    }
  }
  const extensions = sessionExtensions((declared as Record<string, unknown>).extensions);
  if (extensions !== undefined) out.extensions = extensions;
  return out;
}

/** How many of a client's extensions a session id keeps, and how long an identifier may be. */
const MAX_SESSION_EXTENSIONS = 8;
const MAX_EXTENSION_ID_LENGTH = 128;

/**
 * The client's `extensions` as a session keeps them (docs/operations.md §10 "Extensions"): the
 * first eight identifiers, each with its settings when they are short (128 characters of JSON),
 * else `{}`: declared, the settings left out. Enough to tell which tools the client is given.
 */
function sessionExtensions(declared: unknown): Record<string, unknown> | undefined {
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared))
    return undefined;
  const out: Record<string, unknown> = {};
  let kept = 0;
  // the extensions the gateway acts on first, whatever their place in the declaration
  const entries = Object.entries(declared as Record<string, unknown>).sort(
    ([a], [b]) => Number(b === Extension.ui) - Number(a === Extension.ui),
  );
  for (const [id, settings] of entries) {
    if (kept === MAX_SESSION_EXTENSIONS) break;
    if (id.length > MAX_EXTENSION_ID_LENGTH) continue;
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) continue;
    const text = JSON.stringify(settings);
    out[id] = text.length <= 128 ? (JSON.parse(text) as unknown) : {};
    kept++;
  }
  return out;
}

/**
 * How this gateway keeps 2025 sessions, as /actuator/toolBundles shows it (`sessions`).
 * `sealed`: initialize issues a sealed Mcp-Session-Id; `keySource` says whether the keys come
 * from MCP_SESSION_KEYS (`env`) or were generated at boot (`generated`, local profile: ids end
 * with the process). `stateless`: MCP_SESSION_KEYS is unset outside the local profile; no
 * session id is issued, and one a client still sends is ignored.
 */
export type SessionsView =
  | { readonly mode: 'sealed'; readonly keySource: 'env' | 'generated' }
  | { readonly mode: 'stateless'; readonly keySource: 'none'; readonly warning: string };

const STATELESS_WARNING =
  'MCP_SESSION_KEYS is not set: stateless legacy mode. initialize issues no Mcp-Session-Id ' +
  '(2025 clients work without one) and a session id a client sends is ignored. Set ' +
  'MCP_SESSION_KEYS ("kid:base64-32-bytes") on every replica to issue sealed sessions.';

const TOKEN_PREFIX = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Mcp-Session-Id as a sealed token (DESIGN "No sticky sessions"): AES-256-GCM over the
 * claims, with the gateway identity as associated data and a key id for rotation, so any
 * replica holding the keys opens any session and nothing per session lives in memory.
 * Format: `v1.<kid>.<base64url(iv | ciphertext | tag)>`, visible ASCII as the spec requires.
 *
 * Without any key (MCP_SESSION_KEYS unset outside the local profile) the service is in
 * stateless mode: `issue` gives nothing and `sealed` is false; the spec lets a server issue no
 * session id (2025-11-25 transport, "Session Management": the server MAY assign one).
 */
@Injectable()
export class SessionTokenService {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly sealing?: SessionKey;
  private readonly aad: Buffer;
  private readonly ttlSeconds: number;
  /** What /actuator/toolBundles shows under `sessions`. */
  readonly view: SessionsView;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const sessionKeys = config.sessionKeys;
    const mcp = config.mcp;
    this.sealing = sessionKeys[0];
    this.keys = new Map(sessionKeys.map((k) => [k.kid, k.key]));
    this.aad = Buffer.from(`mcp-gateway-session:${mcp.identity}`);
    this.ttlSeconds = mcp.session.ttlSeconds;
    const logger = new Logger('Session');
    if (this.sealing === undefined) {
      this.view = { mode: 'stateless', keySource: 'none', warning: STATELESS_WARNING };
      logger.warn(STATELESS_WARNING);
    } else if (config.sessionKeysEphemeral) {
      this.view = { mode: 'sealed', keySource: 'generated' };
      logger.warn(
        'MCP_SESSION_KEYS is not set: sessions are sealed with a random key and end when this process stops',
      );
    } else {
      this.view = { mode: 'sealed', keySource: 'env' };
    }
  }

  /** true when session ids are issued and checked; false in stateless mode. */
  get sealed(): boolean {
    return this.sealing !== undefined;
  }

  /**
   * Seals a new session for this negotiated version and the client's declared capabilities
   * (their relayed subset), bound to the caller that opened it when there is one. Only when
   * `sealed`: throws otherwise.
   */
  issue(
    protocolVersion: string,
    nowMs = Date.now(),
    clientCapabilities?: Record<string, unknown>,
    caller?: CallerIdentity,
  ): string {
    if (this.sealing === undefined) throw new Error('stateless mode: no session key to seal with');
    const iat = Math.floor(nowMs / 1000);
    const payload: SealedPayload = {
      pv: protocolVersion,
      iat,
      exp: iat + this.ttlSeconds,
      ...(clientCapabilities === undefined ? {} : { cc: clientCapabilities }),
      ...(caller === undefined ? {} : { cb: callerDigest(caller) }),
    };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealing.key, iv);
    cipher.setAAD(this.aad);
    const sealed = Buffer.concat([
      iv,
      cipher.update(JSON.stringify(payload), 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${TOKEN_PREFIX}.${this.sealing.kid}.${sealed.toString('base64url')}`;
  }

  /**
   * Opens a session id for this caller (undefined when `mcp.auth` is off): undefined when it
   * does not open, or when it records another caller than this one (a session id is not a
   * credential: another caller's token never uses it; MCP security best practices, "Session
   * Hijacking"). A session that records no caller (sealed with `mcp.auth` off, or by a build
   * before sessions recorded it) opens only without a caller: an authenticated caller gets 404
   * and initializes a session of its own, so no two callers share one (its tool selection, log
   * level, resource subscriptions) when a replica with auth off shares the keys, or auth was
   * turned on (docs/security.md "Sessions and notification streams").
   */
  openFor(
    token: string,
    caller: CallerIdentity | undefined,
    nowMs = Date.now(),
  ): SessionClaims | undefined {
    const claims = this.open(token, nowMs);
    if (claims === undefined) return undefined;
    return callerDigest(caller) === claims.callerDigest ? claims : undefined;
  }

  /** Opens a session id; undefined when it is malformed, forged, sealed by an unknown key or expired. */
  open(token: string, nowMs = Date.now()): SessionClaims | undefined {
    const [prefix, kid, body, extra] = token.split('.');
    if (prefix !== TOKEN_PREFIX || kid === undefined || body === undefined || extra !== undefined)
      return undefined;
    const key = this.keys.get(kid);
    if (key === undefined) return undefined;
    const sealed = Buffer.from(body, 'base64url');
    // Buffer skips characters outside the alphabet: only the canonical spelling opens.
    if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.toString('base64url') !== body)
      return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(this.aad);
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]);
      const payload = JSON.parse(plain.toString('utf8')) as SealedPayload;
      if (
        typeof payload.pv !== 'string' ||
        typeof payload.iat !== 'number' ||
        typeof payload.exp !== 'number'
      ) {
        return undefined;
      }
      if (payload.exp * 1000 <= nowMs) return undefined;
      return {
        protocolVersion: payload.pv,
        issuedAt: payload.iat,
        expiresAt: payload.exp,
        ...(typeof payload.cc === 'object' && payload.cc !== null
          ? { clientCapabilities: payload.cc }
          : {}),
        ...(typeof payload.cb === 'string' ? { callerDigest: payload.cb } : {}),
      };
    } catch {
      return undefined;
    }
  }
}
