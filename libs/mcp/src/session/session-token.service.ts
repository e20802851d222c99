import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig, type SessionKey } from '@app/config';

/** What a legacy-era session carries; everything the gateway needs lives in the token itself. */
export interface SessionClaims {
  /** Negotiated protocol version. */
  readonly protocolVersion: string;
  /** Issued at, seconds since the epoch. */
  readonly issuedAt: number;
  /** Expires at, seconds since the epoch. */
  readonly expiresAt: number;
}

interface SealedPayload {
  readonly pv: string;
  readonly iat: number;
  readonly exp: number;
}

const TOKEN_PREFIX = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Mcp-Session-Id as a sealed token (DESIGN "No sticky sessions"): AES-256-GCM over the
 * claims, with the gateway identity as associated data and a key id for rotation, so any
 * replica holding the keys opens any session and nothing per session lives in memory.
 * Format: `v1.<kid>.<base64url(iv | ciphertext | tag)>`, visible ASCII as the spec requires.
 */
@Injectable()
export class SessionTokenService {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly sealing: SessionKey;
  private readonly aad: Buffer;
  private readonly ttlSeconds: number;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const [first] = config.sessionKeys;
    if (first === undefined) throw new Error('no session key configured');
    this.sealing = first;
    this.keys = new Map(config.sessionKeys.map((k) => [k.kid, k.key]));
    this.aad = Buffer.from(`mcp-gateway-session:${config.mcp.identity}`);
    this.ttlSeconds = config.mcp.session.ttlSeconds;
    if (config.sessionKeysEphemeral) {
      new Logger('Session').warn(
        'MCP_SESSION_KEYS is not set: sessions are sealed with a random key and end when this process stops',
      );
    }
  }

  /** Seals a new session for this negotiated version. */
  issue(protocolVersion: string, nowMs = Date.now()): string {
    const iat = Math.floor(nowMs / 1000);
    const payload: SealedPayload = { pv: protocolVersion, iat, exp: iat + this.ttlSeconds };
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
      return { protocolVersion: payload.pv, issuedAt: payload.iat, expiresAt: payload.exp };
    } catch {
      return undefined;
    }
  }
}
