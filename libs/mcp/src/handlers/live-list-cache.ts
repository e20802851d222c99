import { createHash } from 'node:crypto';
import type { UpstreamDefinition } from '@app/config';
import type { UpstreamContribution } from '@app/registry';

/** A live answer kept for reuse, with the hints it came with. */
export interface CachedLiveList {
  readonly contribution: UpstreamContribution;
  /** The answer's ttlMs, ms. */
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

interface Entry extends CachedLiveList {
  /** performance.now() after which the entry is stale. */
  readonly expiresAt: number;
  /** What the entry weighs: the length of the list's answer (its pages' results together). */
  readonly bytes: number;
}

/**
 * Entries kept at most, and the bytes of their answers together; the oldest go first beyond
 * either (a bound on memory, not a policy: each caller context has its own entry, and an
 * upstream answers each up to `mcp.execution.maxResponseBytes`). An answer over a quarter of
 * the bytes is not kept.
 */
const MAX_ENTRIES = 10_000;
export const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/**
 * Live list answers cached per (upstream, method, authorization context) for their own `ttlMs`
 * (docs/operations.md §11 "Live lists"; wire notes §3: a private result is reused only within
 * the same authorization context). The context is a SHA-256 digest of the caller's access token
 * (one anonymous context without one) and the exact headers the upstream is sent for this
 * caller (forwarded headers, Authorization): a token exchanged for another scope, or a new token
 * of the same subject with other grants, asks again, two callers that the upstream could tell
 * apart never share an entry, and no token is kept in a key. An answer with ttlMs 0 (or none) is
 * not kept. In this process only: a replica's cache is a latency saving, never shared state.
 */
export class LiveListCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes = MAX_CACHED_BYTES) {}

  /**
   * The cache key of one caller's view of one upstream list: of one registration of the id
   * (a server registered again under it never gets the earlier one's lists, docs/operations.md
   * §15 "Deleted means gone").
   */
  static key(
    upstream: Pick<UpstreamDefinition, 'id' | 'registration'>,
    method: string,
    callerToken: string | undefined,
    sentHeaders: Readonly<Record<string, string>>,
  ): string {
    const headers = Object.entries(sentHeaders).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const scope = createHash('sha256')
      .update(JSON.stringify([upstream.registration ?? null, callerToken ?? null, headers]))
      .digest('base64url');
    return `${upstream.id}\u0000${method}\u0000${scope}`;
  }

  get(key: string, now = performance.now()): CachedLiveList | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (now >= entry.expiresAt) {
      this.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * Keeps the answer for its ttlMs; ttlMs 0, or an answer over a quarter of the cache's bytes,
   * keeps nothing.
   * @param bytes the answer's length (LiveListOutcome.bytes)
   */
  set(key: string, value: CachedLiveList, bytes: number, now = performance.now()): void {
    this.delete(key);
    if (!(value.ttlMs > 0) || bytes > this.maxBytes / 4) return;
    this.entries.set(key, { ...value, expiresAt: now + value.ttlMs, bytes });
    this.bytes += bytes;
    while (this.entries.size > MAX_ENTRIES || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  get size(): number {
    return this.entries.size;
  }
}
