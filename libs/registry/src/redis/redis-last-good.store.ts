import { hostname } from 'node:os';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { markClosing, onClusterFailover, STORED_RECORD_ROOM, type RedisClient } from '@app/redis';
import type { GatewayConfig } from '@app/config';
import type { GatewayMetrics } from '@app/observability';
import type { AcceptedManifest } from '../manifest/manifest.types';
import type { LastGoodCopy } from '../state/bundle-record';
import type { UpstreamLists } from '../upstream/upstream-pull-result';
import {
  sourceUrlDigest,
  type LastGoodStore,
  type StoredManifest,
  type StoredUpstreamLists,
  type StoreStatus,
} from './last-good-store';

/** What one Redis value holds (JSON). */
interface StoredRecord {
  readonly v: 1;
  readonly bundleId: string;
  readonly fetchedAtMs: number;
  readonly writtenBy: string;
  /** sourceUrlDigest of the manifestUrl it was pulled from; absent in older records. */
  readonly urlDigest?: unknown;
  readonly manifest: unknown;
}

/**
 * Writes a copy only when no newer one is stored (another replica may have pulled later):
 * KEYS[1] = manifest key, KEYS[2] = fetched-at key; ARGV = payload, fetchedAtMs, ttl seconds,
 * latest plausible time in ms. A fetched-at key holding anything but a number, or a time
 * beyond the plausible (garbage, or a clock far ahead), is overwritten.
 */
const WRITE_IF_NEWER = `
local cur = redis.pcall('GET', KEYS[2])
local stamp = type(cur) == 'string' and tonumber(cur) or nil
if stamp and stamp > tonumber(ARGV[2]) and stamp <= tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
`;

/** How far ahead of this replica's clock another replica's may plausibly be. */
const CLOCK_SKEW_MS = 5 * 60_000;

type RedisWithScript = RedisClient & {
  writeLastGood(
    manifestKey: string,
    stampKey: string,
    payload: string,
    fetchedAtMs: number,
    ttl: number,
    latestPlausibleMs: number,
  ): Promise<number>;
};

function errorType(err: unknown): string {
  if (!(err instanceof Error)) return 'RedisError';
  if (/timed? ?out/i.test(err.message)) return 'RedisTimeoutError';
  if (/writeable|ECONNREFUSED|closed|ECONNRESET|connect/i.test(err.message))
    return 'RedisConnectionError';
  if (err.name === 'ReplyError') return 'RedisReplyError';
  if (/protocol|parse/i.test(err.message)) return 'RedisProtocolError';
  return err.name === 'Error' ? 'RedisError' : err.name;
}

/**
 * The manifest in the contract's format, as a Tool Service would publish it, written as text
 * from the tools' published JSON (each an object text, so `_meta` is spliced in before its `}`).
 */
function manifestText(manifest: AcceptedManifest): string {
  const tools = manifest.tools.map((t) => {
    const meta = JSON.stringify({
      version: t.version,
      ...(t.timeoutMillis !== undefined ? { timeoutMillis: t.timeoutMillis } : {}),
      enabled: t.enabled,
      // the gateway's grouping: virtual servers select by it on the replica that reads this copy
      ...(t.tags !== undefined ? { tags: t.tags } : {}),
    });
    return `${t.publishedJson.slice(0, -1)},"_meta":${meta}}`;
  });
  const revision =
    manifest.revision !== undefined ? `,"revision":${JSON.stringify(manifest.revision)}` : '';
  return `{"bundleId":${JSON.stringify(manifest.bundleId)}${revision},"tools":[${tools.join(',')}]}`;
}

/**
 * LastGoodStore on Redis (ioredis, REDIS_URL). Keys are namespaced by the gateway identity
 * and bundle id, with a Redis Cluster hash tag so a bundle's two keys share a slot:
 * `<keyPrefix>:{<identity>:<bundleId>}:manifest` and `…:fetched-at`. No command is queued
 * while disconnected and each is bounded by commandTimeoutMillis, so a Redis that is down
 * or silent costs a refresh at most that long and never touches /mcp.
 */
export class RedisLastGoodStore implements LastGoodStore, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');
  private readonly redis: RedisWithScript;
  private readonly keyPrefix: string;
  private readonly identity: string;
  private readonly ttlSeconds: number;
  private readonly connectTimeoutMillis: number;
  private readonly writtenBy: string;
  /**
   * The longest stored copy of a manifest read back: twice `discovery.maxManifestBytes` and room
   * for the record around it. A longer one is no copy this gateway wrote from a manifest it
   * accepted, and is not parsed (its JSON.parse alone would hold the event loop).
   */
  private readonly maxCopyChars: number;
  /**
   * The longest stored copy of an upstream's lists read back (docs/operations.md §5 "Redis: one
   * server, Sentinel or Cluster"): what the caps of a pull let it bring (§10,
   * `registry.maxPagesPerList`: the pages of one list together count as one answer,
   * `execution.maxResponseBytes`), for the four lists and the initialize or server/discover
   * answer whose capabilities are kept, so 5 × maxResponseBytes;
   * twice that, as for a bundle's copy (a number the upstream wrote short, `1e20`, is written
   * back spelled out), and room for the record. A longer one is no copy this gateway wrote and
   * is not parsed.
   */
  private readonly maxListsChars: number;
  /**
   * Per source (`bundle/<id>`, `upstream/<id>`), the length of the oversized value last warned
   * about: the warm start reads again after each round that left no catalog, and says it once.
   */
  private readonly oversizedWarned = new Map<string, number>();
  private available: boolean | null = null;
  private lastFailureReason: string | null = null;
  private closed = false;
  private connectedBefore = false;
  private readonly reconnectListeners: (() => void)[] = [];

  /** @param client a connection for the `lastGood` use (libs/redis), not yet connected. */
  constructor(
    client: RedisClient,
    config: GatewayConfig,
    private readonly metrics?: GatewayMetrics,
  ) {
    const r = config.mcp.redis;
    this.keyPrefix = r.keyPrefix;
    this.identity = config.mcp.identity;
    this.ttlSeconds = r.ttlSeconds;
    this.connectTimeoutMillis = r.connectTimeoutMillis;
    this.writtenBy = `${config.mcp.identity}/${hostname()}/${process.pid}`;
    this.maxCopyChars = 2 * config.mcp.discovery.maxManifestBytes + STORED_RECORD_ROOM;
    this.maxListsChars = 2 * 5 * config.mcp.execution.maxResponseBytes + STORED_RECORD_ROOM;
    this.redis = client as RedisWithScript;
    this.redis.defineCommand('writeLastGood', { numberOfKeys: 2, lua: WRITE_IF_NEWER });
    this.redis.on('error', (err: unknown) => this.markUnavailable(err));
    this.redis.on('ready', () => {
      // the first connection is the warm start's; a later one may be to a new master (an
      // outage a command noticed is told by markAvailable instead)
      const again = this.connectedBefore && this.available !== false;
      this.connectedBefore = true;
      if (again) this.reconnected();
      this.markAvailable();
    });
    // a Cluster that replaced a lost master stays connected: no `ready` tells it
    onClusterFailover(client, () => {
      if (!this.closed && this.available !== false) this.reconnected();
    });
    this.redis.connect().catch((err: unknown) => this.markUnavailable(err));
  }

  manifestKey(bundleId: string): string {
    return `${this.keyPrefix}:{${this.identity}:${bundleId}}:manifest`;
  }

  fetchedAtKey(bundleId: string): string {
    return `${this.keyPrefix}:{${this.identity}:${bundleId}}:fetched-at`;
  }

  /** Keys of an upstream's lists: `<keyPrefix>:{<identity>:upstream/<id>}:lists` (ids never hold "/"). */
  upstreamListsKey(upstreamId: string): string {
    return `${this.keyPrefix}:{${this.identity}:upstream/${upstreamId}}:lists`;
  }

  upstreamFetchedAtKey(upstreamId: string): string {
    return `${this.keyPrefix}:{${this.identity}:upstream/${upstreamId}}:fetched-at`;
  }

  async loadUpstreams(
    upstreamIds: readonly string[],
  ): Promise<ReadonlyMap<string, StoredUpstreamLists>> {
    const found = new Map<string, StoredUpstreamLists>();
    const values = await this.getEach(upstreamIds.map((id) => this.upstreamListsKey(id)));
    if (values === undefined) return found;
    upstreamIds.forEach((id, i) => {
      const raw = values[i];
      if (raw === null || raw === undefined) return;
      if (raw.length > this.maxListsChars) {
        if (this.firstOversized(`upstream/${id}`, raw.length))
          this.logger.warn(
            `Stored last good lists of upstream ${id} are ${raw.length} characters, more than ` +
              `${this.maxListsChars} (ten times execution.maxResponseBytes and room for the record); treated as absent`,
          );
        return;
      }
      this.oversizedWarned.delete(`upstream/${id}`);
      try {
        const record = JSON.parse(raw) as Record<string, unknown>;
        if (
          record.v === 1 &&
          record.upstreamId === id &&
          typeof record.fetchedAtMs === 'number' &&
          typeof record.lists === 'object' &&
          record.lists !== null
        ) {
          found.set(id, {
            lists: record.lists,
            fetchedAt: new Date(record.fetchedAtMs),
            writtenBy: typeof record.writtenBy === 'string' ? record.writtenBy : 'unknown',
            ...(typeof record.urlDigest === 'string' && { urlDigest: record.urlDigest }),
          });
          return;
        }
      } catch {
        // unreadable: treated as absent below
      }
      this.logger.warn(
        `Stored last good lists of upstream ${id} are unreadable; treated as absent`,
      );
    });
    return found;
  }

  saveUpstream(upstreamId: string, source: string, lists: UpstreamLists, fetchedAt: Date): void {
    if (this.closed || this.redis.status !== 'ready') return;
    const fetchedAtMs = fetchedAt.getTime();
    const payload = JSON.stringify({
      v: 1,
      upstreamId,
      urlDigest: sourceUrlDigest(source),
      fetchedAtMs,
      writtenBy: this.writtenBy,
      lists,
    });
    this.redis
      .writeLastGood(
        this.upstreamListsKey(upstreamId),
        this.upstreamFetchedAtKey(upstreamId),
        payload,
        fetchedAtMs,
        this.ttlSeconds,
        Date.now() + CLOCK_SKEW_MS,
      )
      .then(() => this.markAvailable())
      .catch((err: unknown) => this.markUnavailable(err));
  }

  /** Whether this oversized value of `source` is one not warned about yet (and now is). */
  private firstOversized(source: string, length: number): boolean {
    if (this.oversizedWarned.get(source) === length) return false;
    this.oversizedWarned.set(source, length);
    return true;
  }

  private reconnected(): void {
    for (const listener of this.reconnectListeners) listener();
  }

  onReconnected(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  status(): StoreStatus {
    return {
      configured: true,
      available: this.available,
      lastFailureReason: this.lastFailureReason,
    };
  }

  async load(bundleIds: readonly string[]): Promise<ReadonlyMap<string, StoredManifest>> {
    const found = new Map<string, StoredManifest>();
    const values = await this.getEach(bundleIds.map((id) => this.manifestKey(id)));
    if (values === undefined) return found;
    bundleIds.forEach((id, i) => {
      const raw = values[i];
      if (raw === null || raw === undefined) return;
      if (raw.length > this.maxCopyChars) {
        if (this.firstOversized(`bundle/${id}`, raw.length))
          this.logger.warn(
            `Stored last-good copy of bundle ${id} is ${raw.length} characters, more than twice discovery.maxManifestBytes; treated as absent`,
          );
        return;
      }
      this.oversizedWarned.delete(`bundle/${id}`);
      const record = this.parse(raw, id);
      if (record === undefined) {
        this.logger.warn(`Stored last-good copy of bundle ${id} is unreadable; treated as absent`);
        return;
      }
      found.set(id, {
        body: record.manifest,
        fetchedAt: new Date(record.fetchedAtMs),
        writtenBy: record.writtenBy,
        ...(typeof record.urlDigest === 'string' && { urlDigest: record.urlDigest }),
      });
    });
    return found;
  }

  save(bundleId: string, manifestUrl: string, copy: LastGoodCopy): void {
    if (this.closed || this.redis.status !== 'ready') return;
    const fetchedAtMs = copy.fetchedAt.getTime();
    // Written as text: the manifest part is built from the tools' JSON, not re-serialized.
    const payload =
      `{"v":1,"bundleId":${JSON.stringify(bundleId)},"fetchedAtMs":${fetchedAtMs},` +
      `"writtenBy":${JSON.stringify(this.writtenBy)},` +
      `"urlDigest":${JSON.stringify(sourceUrlDigest(manifestUrl))},` +
      `"manifest":${manifestText(copy.manifest)}}`;
    this.redis
      .writeLastGood(
        this.manifestKey(bundleId),
        this.fetchedAtKey(bundleId),
        payload,
        fetchedAtMs,
        this.ttlSeconds,
        Date.now() + CLOCK_SKEW_MS,
      )
      .then(() => this.markAvailable())
      .catch((err: unknown) => this.markUnavailable(err));
  }

  /**
   * GET of each key (one command per key keeps this valid on Redis Cluster: the keys live in
   * different slots); undefined when there are none or Redis is unavailable.
   */
  private async getEach(keys: readonly string[]): Promise<(string | null)[] | undefined> {
    if (keys.length === 0 || !(await this.whenReady())) return undefined;
    try {
      const values = await Promise.all(keys.map((key) => this.redis.get(key)));
      this.markAvailable();
      return values;
    } catch (err) {
      this.markUnavailable(err);
      return undefined;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    // closed on purpose: never connected again (libs/redis/src/sentinel-revival.ts)
    markClosing(this.redis);
    try {
      await Promise.race([
        this.redis.quit(),
        new Promise((r) => setTimeout(r, this.connectTimeoutMillis)),
      ]);
    } catch {
      // already gone
    }
    this.redis.disconnect();
  }

  /** Waits up to connectTimeoutMillis for the connection; false when it is not there. */
  private async whenReady(): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    if (this.closed) return false;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => {
        if (this.available !== false) this.markUnavailable(new Error('connect timed out'));
        done(false);
      }, this.connectTimeoutMillis);
      this.redis.once('ready', onReady);
    });
  }

  private parse(raw: string, bundleId: string): StoredRecord | undefined {
    try {
      const value = JSON.parse(raw) as Partial<StoredRecord> | null;
      if (
        value === null ||
        typeof value !== 'object' ||
        value.v !== 1 ||
        value.bundleId !== bundleId ||
        typeof value.fetchedAtMs !== 'number' ||
        !Number.isFinite(value.fetchedAtMs) ||
        value.fetchedAtMs <= 0 ||
        value.fetchedAtMs > Date.now() + CLOCK_SKEW_MS ||
        typeof value.writtenBy !== 'string'
      ) {
        return undefined;
      }
      return value as StoredRecord;
    } catch {
      return undefined;
    }
  }

  /** Logged once per transition, not per call. */
  private markAvailable(): void {
    if (this.available === true) return;
    this.metrics?.redisAvailable(true);
    const wasLost = this.available === false;
    this.available = true;
    // the status names the failure while it lasts (as a bundle's lastFailureReason), not after
    this.lastFailureReason = null;
    if (!wasLost) {
      this.logger.log('Redis connected; last-good copies are shared');
      return;
    }
    this.logger.log('Redis is reachable again; last-good copies are shared again');
    // it may be another master now, one that never got the last writes
    this.reconnected();
  }

  private markUnavailable(err: unknown): void {
    this.lastFailureReason = errorType(err);
    if (this.available === false || this.closed) return;
    this.available = false;
    this.metrics?.redisAvailable(false);
    this.logger.warn(
      `Redis unavailable (${this.lastFailureReason}); serving from memory, last-good copies are not shared until it returns`,
    );
  }
}
