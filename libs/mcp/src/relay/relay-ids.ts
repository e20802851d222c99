import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';

/** Where a relayed server->client request came from: enough to route the client's answer back. */
export interface RelayOrigin {
  /** The upstream id. */
  readonly upstream: string;
  /** The upstream session the request arrived on (2025), if any. */
  readonly session?: string;
  /** The upstream's own request id. */
  readonly id: string | number;
}

const PREFIX = 'gw-relay.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The ids of server->client requests relayed to an agent (issue 10 §5): the upstream's
 * `sampling/createMessage`, `elicitation/create` or `roots/list` goes to the agent under an id
 * that carries, sealed (AES-256-GCM), the upstream, its session and its request id. The
 * agent's answer may reach any replica: each opens the id and posts the answer to the right
 * upstream session. The key is derived from the first MCP_SESSION_KEYS key (shared by the
 * replicas), or random per process when there is none (answers must then come back here).
 */
@Injectable()
export class RelayIds {
  private readonly key: Buffer;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const base = config.sessionKeys[0]?.key ?? randomBytes(32);
    this.key = createHash('sha256').update('mcp-gateway relay ids\u0000').update(base).digest();
  }

  seal(origin: RelayOrigin): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([
      iv,
      cipher.update(JSON.stringify([origin.upstream, origin.session ?? null, origin.id]), 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${PREFIX}${body.toString('base64url')}`;
  }

  /** The origin sealed in a relay id; undefined for any other id, or a forged or foreign one. */
  open(id: unknown): RelayOrigin | undefined {
    if (typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
    const sealed = Buffer.from(id.slice(PREFIX.length), 'base64url');
    if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const text = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
      const [upstream, session, requestId] = JSON.parse(text) as [
        string,
        string | null,
        string | number,
      ];
      return { upstream, ...(session === null ? {} : { session }), id: requestId };
    } catch {
      return undefined;
    }
  }
}
