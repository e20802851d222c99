import { createHash } from 'node:crypto';
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { callerName, type CallerIdentity } from '@app/identity';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { MemoryBuckets } from './memory-buckets';
import type { RedisBuckets } from './redis-buckets';
import type { BucketSettings, BucketVerdict } from './token-bucket';

/** Where shared buckets live; null: in memory only. Provided by McpModule from mcp.rateLimits.store. */
export const RATE_LIMIT_REDIS = Symbol('RATE_LIMIT_REDIS');

/** The subject of a request without an authenticated caller (mcp.auth.mode none): one bucket for all. */
export const ANONYMOUS_SUBJECT = 'anonymous';

/**
 * The limit-hit error (docs/operations.md §14 "Rate limits per caller"): HTTP 429 with
 * `Retry-After` (whole seconds, at least 1) and a JSON-RPC error whose `data.retryAfterSeconds`
 * says the same (wire-errors.ts).
 */
export function rateLimitedError(which: 'subject' | 'tool', retryAfterMs: number): GatewayError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError(
    GatewayErrorCode.RateLimited,
    which === 'subject'
      ? `Rate limit hit: too many requests from this caller; retry after ${retryAfterSeconds} s`
      : `Rate limit hit: too many calls of this tool from this caller; retry after ${retryAfterSeconds} s`,
    { retryAfterSeconds, limit: which === 'subject' ? 'perSubject' : 'perTool' },
  );
}

/**
 * Token buckets per caller on /mcp (mcp.rateLimits;
 * docs/operations.md §14 "Rate limits per caller"): `perSubject` for every request of a caller
 * (`sub`, else `client_id`; without auth, one `anonymous` caller), and `perTool` for each (caller,
 * published tool name) on tools/call. Counted in this replica's memory, or in Redis shared by every
 * replica (store redis), falling back to memory while Redis cannot answer. The management port
 * never comes here.
 */
@Injectable()
export class CallerLimits implements OnApplicationShutdown {
  private readonly perSubject?: BucketSettings;
  private readonly perTool?: BucketSettings;
  private readonly memory = new MemoryBuckets();
  private readonly keyPrefix: string;
  /** Whether any limit is configured: when not, admit() costs one branch. */
  readonly enabled: boolean;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() @Inject(RATE_LIMIT_REDIS) private readonly redis: RedisBuckets | null = null,
  ) {
    const limits = config.mcp.rateLimits;
    this.perSubject = limits.perSubject;
    this.perTool = limits.perTool;
    this.enabled = this.perSubject !== undefined || this.perTool !== undefined;
    this.keyPrefix = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}:ratelimit`;
  }

  /**
   * Takes a token from the caller's bucket, and for a tool call (`tool` given) from its
   * (caller, tool) bucket.
   * @throws GatewayError RateLimited when a bucket is empty
   */
  async admit(caller: CallerIdentity | undefined, tool?: string): Promise<void> {
    if (!this.enabled) return;
    const subject = callerName(caller) ?? ANONYMOUS_SUBJECT;
    if (this.perSubject !== undefined) {
      const verdict = await this.take(`s:${encodeURIComponent(subject)}`, this.perSubject, subject);
      if (!verdict.admitted) throw rateLimitedError('subject', verdict.retryAfterMs);
    }
    if (tool !== undefined) await this.admitTool(caller, tool);
  }

  /**
   * Takes a token from the (caller, tool) bucket only. Called once the tool is known to be one
   * the caller may call: a name that is unknown or outside the grant gets no bucket, so made-up
   * names cannot fill the store (Redis keys live as long as a bucket takes to refill), and an
   * ungranted tool is limited exactly as an unknown one (docs/operations.md §13 "Access").
   * @throws GatewayError RateLimited when the bucket is empty
   */
  async admitTool(caller: CallerIdentity | undefined, tool: string): Promise<void> {
    if (this.perTool === undefined) return;
    const subject = callerName(caller) ?? ANONYMOUS_SUBJECT;
    const key = `t:${encodeURIComponent(subject)}:${toolKey(tool)}`;
    const verdict = await this.take(key, this.perTool, subject);
    if (!verdict.admitted) throw rateLimitedError('tool', verdict.retryAfterMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.close();
  }

  private async take(key: string, settings: BucketSettings, owner: string): Promise<BucketVerdict> {
    if (this.redis !== null) {
      const shared = await this.redis.take(`${this.keyPrefix}:${key}`, settings);
      if (shared !== undefined) return shared;
    }
    return this.memory.take(key, settings, owner);
  }
}

/** Longest tool name kept as written in a bucket's key (a tool name has at most 128, SEP-986). */
const MAX_KEYED_NAME = 256;

/**
 * A tool name as a bucket's key part: as written (encoded), or its SHA-256 for a longer one, so
 * that names the catalog never held, however long, cost a bucket of a few bytes, in memory and
 * in Redis alike.
 */
export function toolKey(tool: string): string {
  return tool.length <= MAX_KEYED_NAME
    ? encodeURIComponent(tool)
    : `#${createHash('sha256').update(tool).digest('base64url')}`;
}
