import { Logger } from '@nestjs/common';
import type { GatewayConfig } from '@app/config';
import { quitRedis, StoreAttempts, storedJsonLimit, type RedisClient } from '@app/redis';
import type { ToolApproval } from './tool-pins';

/**
 * Where approvals of pinned tools are shared between replicas (docs/operations.md §6 "Pinned
 * tool definitions"): a Redis hash of every approval and a counter bumped by each operator
 * approval, both under the gateway identity's hash tag (one Cluster slot). Without Redis the
 * approvals live as long as the process: after a restart every pinned tool waits for review
 * again, which serves nothing unreviewed.
 */
export interface PinStore {
  /** Every approval; undefined when the store cannot be read now. */
  readAll(): Promise<ReadonlyMap<string, ToolApproval> | undefined>;
  /** The counter of approvals; undefined when the store cannot be read now. */
  version(): Promise<string | undefined>;
  /**
   * Writes approvals; `approvals` (an operator's) bumps the counter so the other replicas read
   * them, a cosmetic move does not. false when the store did not take them.
   */
  write(
    entries: readonly (readonly [string, ToolApproval])[],
    approvals: boolean,
  ): Promise<boolean>;
  close(): Promise<void>;
}

export const PIN_STORE = Symbol('PIN_STORE');

function isApproval(value: unknown): value is ToolApproval {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.digest === 'string' &&
    typeof v.definition === 'string' &&
    typeof v.approvedAt === 'number' &&
    typeof v.approvedBy === 'string' &&
    (v.tags === undefined || (Array.isArray(v.tags) && v.tags.every((t) => typeof t === 'string')))
  );
}

export class RedisPinStore implements PinStore {
  private readonly logger = new Logger('Redis');
  private readonly hashKey: string;
  private readonly versionKey: string;
  private readonly attempts: StoreAttempts;
  /**
   * The longest approval parsed: its definition is one tool's published JSON, which came in a
   * manifest (`discovery.maxManifestBytes`) or an upstream's tools/list
   * (`execution.maxResponseBytes`).
   */
  private readonly maxApprovalChars: number;

  /** @param client a connection for the `pins` use (libs/redis) */
  constructor(
    private readonly redis: RedisClient,
    config: GatewayConfig,
  ) {
    const tag = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}`;
    this.hashKey = `${tag}:pins`;
    this.versionKey = `${tag}:pins-version`;
    this.maxApprovalChars = storedJsonLimit(
      Math.max(config.mcp.discovery.maxManifestBytes, config.mcp.execution.maxResponseBytes),
    );
    this.redis.on('error', () => undefined);
    this.attempts = new StoreAttempts(
      this.logger,
      'pinned tool approvals',
      'approvals stay in memory here until it does',
    );
  }

  async readAll(): Promise<ReadonlyMap<string, ToolApproval> | undefined> {
    const all = await this.attempts.run(() => this.redis.hgetall(this.hashKey));
    if (all === undefined) return undefined;
    const approvals = new Map<string, ToolApproval>();
    for (const [key, text] of Object.entries(all)) {
      // longer than any approval written from a definition: the tool stays held, unparsed
      if (text.length > this.maxApprovalChars) continue;
      try {
        const parsed: unknown = JSON.parse(text);
        // a field another version wrote, or damaged: not an approval, so the tool stays held
        if (isApproval(parsed)) approvals.set(key, parsed);
      } catch {
        // as above
      }
    }
    return approvals;
  }

  async version(): Promise<string | undefined> {
    const value = await this.attempts.run(() => this.redis.get(this.versionKey));
    return value === undefined ? undefined : (value ?? '0');
  }

  async write(
    entries: readonly (readonly [string, ToolApproval])[],
    approvals: boolean,
  ): Promise<boolean> {
    if (entries.length === 0) return true;
    const fields = entries.flatMap(([key, approval]) => [key, JSON.stringify(approval)]);
    const done = await this.attempts.run(async () => {
      const multi = this.redis.multi().hset(this.hashKey, ...fields);
      // a lost counter starts again from now in ms, not from 1: a replica that read version n
      // before the loss must not take the write-back's n for the store it read
      if (approvals) multi.set(this.versionKey, String(Date.now()), 'NX').incr(this.versionKey);
      const results = await multi.exec();
      return results?.every(([err]) => err === null) === true;
    });
    return done === true;
  }

  async close(): Promise<void> {
    await quitRedis(this.redis);
  }
}
