import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';

/** What a sealed token is for: its purpose is authenticated (AAD), so one never opens as the other. */
export type SealPurpose =
  | 'request-state'
  | 'bridge-id'
  | 'relay-id'
  | 'task-id'
  | 'task-record'
  | 'resource-bus'
  | 'handoff';

/**
 * What `inspect` found in a token of the purpose's form: its payload; that it was sealed here
 * but has expired; or that it does not open (`foreign`: forged, altered, sealed by another
 * gateway identity or with a key not configured here).
 */
export type SealedContent =
  | { readonly kind: 'open'; readonly payload: Record<string, unknown> }
  | { readonly kind: 'expired' }
  | { readonly kind: 'foreign' };

const FOREIGN: SealedContent = { kind: 'foreign' };

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIXES: Readonly<Record<SealPurpose, string>> = {
  'request-state': 'gwrs1',
  'bridge-id': 'gwbr1',
  // relay ids (docs/security.md, "Answers to relayed requests") kept their prefix (clients and logs know them by it)
  'relay-id': 'gw-relay',
  // task ids handed to clients (docs/operations.md §10 "Tasks")
  'task-id': 'gwtk1',
  // a task's record as kept in Redis (docs/security.md "Records in Redis"): never handed out
  'task-record': 'gwtr1',
  // what replicas tell each other on the resource-update channel (docs/operations.md §10
  // "Resource subscriptions"): never handed to a client
  'resource-bus': 'gwrb1',
  // a retry's input and its answer between replicas (docs/operations.md §11): never handed out
  handoff: 'gwho1',
};

/** The longest token a client hands back that is opened (its ids and envelopes are far shorter). */
const MAX_TOKEN_CHARS = 16_384;

/**
 * AES-256-GCM sealing of the gateway's multi-round-trip tokens
 * (docs/operations.md §11 "Multi round-trip and era bridging"): the `requestState` envelope it
 * hands a 2026 client, the ids of the requests it puts to a 2025 client on a 2026 upstream's
 * behalf, and the relay ids of a 2025 upstream's requests to the client (RelayIds;
 * docs/security.md "Answers to relayed requests"). Keys are derived from MCP_SESSION_KEYS (one per
 * key id, the first seals, all open: rotation as for session ids), so every replica opens
 * what another sealed; without keys a random per-process key is used (tokens then open only
 * on the replica that sealed them). Format: `<prefix>.<kid>.<base64url(iv | ciphertext | tag)>`.
 *
 * Sealed payloads are JSON objects with `exp` (ms since the epoch); `open` refuses a token
 * that is malformed, forged, of another purpose or gateway identity, sealed by an unknown key,
 * or expired.
 */
@Injectable()
export class MrtrSeal {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly sealingKid: string;
  private readonly identity: string;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const derive = (base: Buffer): Buffer =>
      createHash('sha256').update('mcp-gateway mrtr\u0000').update(base).digest();
    const keys = new Map<string, Buffer>();
    for (const k of config.sessionKeys) keys.set(k.kid, derive(k.key));
    if (keys.size === 0) keys.set('p', derive(randomBytes(32)));
    this.keys = keys;
    this.sealingKid = config.sessionKeys[0]?.kid ?? 'p';
    this.identity = config.mcp.identity;
  }

  /** Seals `payload` (a JSON object with `exp`, ms since the epoch) for `purpose`. */
  seal(purpose: SealPurpose, payload: { readonly exp: number }): string {
    const key = this.keys.get(this.sealingKid) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(this.aad(purpose));
    const body = Buffer.concat([
      iv,
      cipher.update(JSON.stringify(payload), 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${PREFIXES[purpose]}.${this.sealingKid}.${body.toString('base64url')}`;
  }

  /**
   * The payload sealed in `token` for `purpose`; undefined when the token is not one (not a
   * string, malformed, forged, another purpose, an unknown key) or has expired at `nowMs`.
   */
  open(
    purpose: SealPurpose,
    token: unknown,
    nowMs = Date.now(),
    maxChars = MAX_TOKEN_CHARS,
  ): Record<string, unknown> | undefined {
    const content = this.inspect(purpose, token, nowMs, maxChars);
    return content?.kind === 'open' ? content.payload : undefined;
  }

  /**
   * Like `open`, but says why a token of the purpose's form (`<prefix>.…`) does not open, so a
   * client whose answer came too late, or carried an id not issued here, can be told so.
   * undefined: not a string of this purpose's form at all.
   */
  inspect(
    purpose: SealPurpose,
    token: unknown,
    nowMs = Date.now(),
    maxChars = MAX_TOKEN_CHARS,
  ): SealedContent | undefined {
    if (typeof token !== 'string' || !token.startsWith(`${PREFIXES[purpose]}.`)) return undefined;
    if (token.length > maxChars) return FOREIGN;
    const [, kid, body, extra] = token.split('.');
    if (kid === undefined || body === undefined || extra !== undefined) return FOREIGN;
    const key = this.keys.get(kid);
    if (key === undefined) return FOREIGN;
    const sealed = Buffer.from(body, 'base64url');
    // Buffer skips characters outside the alphabet: only the canonical spelling opens.
    if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.toString('base64url') !== body)
      return FOREIGN;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(this.aad(purpose));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const text = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
      const payload: unknown = JSON.parse(text);
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return FOREIGN;
      const exp = (payload as { exp?: unknown }).exp;
      if (typeof exp !== 'number') return FOREIGN;
      if (exp <= nowMs) return { kind: 'expired' };
      return { kind: 'open', payload: payload as Record<string, unknown> };
    } catch {
      return FOREIGN;
    }
  }

  private aad(purpose: SealPurpose): Buffer {
    return Buffer.from(`mcp-gateway-${purpose}:${this.identity}`);
  }
}
