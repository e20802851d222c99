import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  Max,
  Min,
  ValidateNested,
} from './class-validator';

const MAPPING = 'must be a mapping of keys (not a list or a value)';

/**
 * One token bucket (docs/operations.md §14 "Rate limits per caller"): holds at most `capacity`
 * requests and gains `refillPerSecond` of them every second; a request takes one, or is refused
 * with the time until one is back.
 */
export class TokenBucketConfig {
  /** Most requests in a burst (the bucket's size); a positive integer. */
  @IsInt({ message: 'must be a positive integer (requests)' })
  @Min(1, { message: 'must be a positive integer' })
  @Max(1_000_000, { message: 'must be at most 1000000' })
  capacity!: number;

  /** Requests regained per second (may be fractional, e.g. 0.5 = one every 2 s); > 0. */
  @IsNumber(
    { allowNaN: false, allowInfinity: false },
    { message: 'is required: a number > 0 (per second)' },
  )
  @Min(0.000001, { message: 'must be a number > 0 (per second)' })
  @Max(1_000_000, { message: 'must be at most 1000000 (per second)' })
  refillPerSecond!: number;
}

export const RATE_LIMIT_STORES = ['memory', 'redis'] as const;
export type RateLimitStore = (typeof RATE_LIMIT_STORES)[number];

/**
 * `mcp.rateLimits` (docs/operations.md §14 "Rate limits per caller"): token buckets per caller on
 * /mcp. Absent buckets: no limit. Never applied to the management port.
 */
export class RateLimitsConfig {
  /** One bucket per caller (`sub`, else `client_id`; without auth: the client address) for every /mcp request. */
  @IsOptional()
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => TokenBucketConfig)
  perSubject?: TokenBucketConfig;

  /** One bucket per (caller, published tool name) for tools/call. */
  @IsOptional()
  @IsObject({ message: MAPPING })
  @ValidateNested()
  @Type(() => TokenBucketConfig)
  perTool?: TokenBucketConfig;

  /**
   * memory: buckets per replica; redis: shared by every replica through REDIS_URL (an atomic
   * script), falling back to memory with a warning while Redis is unreachable.
   */
  @IsIn(RATE_LIMIT_STORES, { message: `must be one of ${RATE_LIMIT_STORES.join(', ')}` })
  store: RateLimitStore = 'memory';
}

/** `mcp.audit` (docs/operations.md §14 "Audit"): one JSON line per tools/call. */
export class AuditConfig {
  /** true (default): every tools/call writes one `audit` line at info level. */
  @IsBoolean({ message: 'must be true or false' })
  enabled = true;
}
