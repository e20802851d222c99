import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { MasterReplidReply, quitRedis, redisOutcomeUnknown, type RedisClient } from '@app/redis';
import { registrationAudienceKey, upstreamNamePrefix, type GatewayConfig } from '@app/config';
import type { StoredRegistration } from './registration-record';
import {
  parseStored,
  RegistrationStoreUnavailableError,
  serialize,
  serializeTail,
  type CreateResult,
  type NewRegistration,
  type RegistrationStore,
  type RemoveResult,
  type ReplaceResult,
  type SeedMode,
  type SeedResult,
  type StoreSnapshot,
} from './registration-store';
import { CREATE, REMOVE, REPLACE, SEED } from './registration-store-scripts';
import {
  DELETION_MEMORY_MAX,
  DELETION_MEMORY_MS,
  seedEntries,
  type Tombstone,
} from './registration-tombstones';

type Reply = (string | number)[];

type RedisWithScripts = RedisClient & {
  createRegistration(...args: (string | number)[]): Promise<Reply>;
  replaceRegistration(...args: (string | number)[]): Promise<Reply>;
  removeRegistration(...args: (string | number)[]): Promise<Reply>;
  seedRegistrations(...args: (string | number)[]): Promise<Reply>;
};

/**
 * Registrations in one Redis hash, `<keyPrefix>:{<identity>}:admin:upstreams`, field = the
 * upstream id, value = the StoredRegistration as JSON (`v: 1`, with its `version`); beside it
 * `…:admin:upstreams:meta` (the store's generation marker and version counter),
 * `…:admin:upstreams:tombstones` (ids deleted lately, with the version deleted) and
 * `…:admin:upstreams:seeded` (ids a re-seed wrote). All four share the `{<identity>}` hash tag
 * (one cluster slot), so each write is one Lua script over them (registration-store-scripts.ts).
 * No expiry: a registration lives until it is deleted.
 */
export class RedisRegistrationStore implements RegistrationStore {
  readonly kind = 'redis';
  private readonly logger = new Logger('Admin');
  private readonly redis: RedisWithScripts;
  readonly key: string;
  readonly metaKey: string;
  readonly tombstonesKey: string;
  readonly seededKey: string;
  /** The master's replication id from a read's INFO reply (said once when Redis refuses INFO). */
  private readonly masterReplid = new MasterReplidReply(
    (text) => this.logger.warn(text),
    'registrations',
  );

  /** @param client a connection for the `registrations` use (libs/redis). */
  constructor(client: RedisClient, config: Pick<GatewayConfig, 'mcp'>) {
    const r = config.mcp.redis;
    this.key = `${r.keyPrefix}:{${config.mcp.identity}}:admin:upstreams`;
    this.metaKey = `${this.key}:meta`;
    this.tombstonesKey = `${this.key}:tombstones`;
    this.seededKey = `${this.key}:seeded`;
    this.redis = client as RedisWithScripts;
    const scripts = {
      createRegistration: CREATE,
      replaceRegistration: REPLACE,
      removeRegistration: REMOVE,
      seedRegistrations: SEED,
    };
    for (const [name, lua] of Object.entries(scripts))
      this.redis.defineCommand(name, { numberOfKeys: 4, lua });
    this.redis.on('error', () => undefined);
  }

  async read(): Promise<StoreSnapshot> {
    // one MULTI: the records, the marker and the tombstones of the same moment
    const replies = await this.run(() =>
      this.redis
        .multi()
        .hgetall(this.key)
        .hget(this.metaKey, 'generation')
        .hgetall(this.tombstonesKey)
        // the master's replication id, from the node holding these keys (a Cluster runs a
        // script on the node of its key): a new one after a failover or a restart
        .eval("return redis.call('INFO', 'replication')", 1, this.key)
        .exec(),
    );
    const [all, generation, tombstones] = (replies ?? []).slice(0, 3).map(([err, value]) => {
      if (err !== null) throw new RegistrationStoreUnavailableError(`Redis refused (${err.name})`);
      return value;
    }) as [
      Record<string, string> | undefined,
      string | null | undefined,
      Record<string, string> | undefined,
    ];
    const server = this.masterReplid.of(replies?.[3]);
    const registrations: StoredRegistration[] = [];
    for (const [id, raw] of Object.entries(all ?? {})) {
      const parsed = parseStored(raw, id);
      if (parsed === undefined)
        this.logger.warn(`Registration ${id} in Redis is unreadable; ignored`);
      else registrations.push(parsed);
    }
    const deleted: Tombstone[] = [];
    for (const [id, raw] of Object.entries(tombstones ?? {})) {
      const m = /^(\d+):(\d+)$/.exec(raw);
      if (m !== null) deleted.push({ id, version: Number(m[1]), deletedAt: Number(m[2]) });
    }
    return { generation: generation ?? undefined, registrations, deleted, server };
  }

  async create(r: NewRegistration, generation: string, max: number): Promise<CreateResult> {
    const [k, a, b] = await this.script('createRegistration', [
      r.upstream.id,
      serializeTail(r),
      generation,
      upstreamNamePrefix(r.upstream),
      max,
      registrationAudienceKey(r.upstream) ?? '',
      Date.now(),
    ]);
    const kind = String(k);
    switch (kind) {
      case 'created':
        return { kind, version: Number(a) };
      case 'prefixTaken':
        return { kind, id: String(a), prefix: String(b) };
      case 'audienceTaken':
        return { kind, id: String(a) };
      case 'idTaken':
      case 'full':
      case 'generation':
        return { kind };
      default:
        throw unexpected(kind);
    }
  }

  async replace(r: NewRegistration, expected: number, generation: string): Promise<ReplaceResult> {
    const [k, a] = await this.script('replaceRegistration', [
      r.upstream.id,
      expected,
      serializeTail(r),
      generation,
      Date.now(),
    ]);
    const kind = String(k);
    switch (kind) {
      case 'replaced':
      case 'changed':
        return { kind, version: Number(a) };
      case 'missing':
      case 'generation':
        return { kind };
      default:
        throw unexpected(kind);
    }
  }

  async remove(
    id: string,
    expected: number | undefined,
    generation: string,
  ): Promise<RemoveResult> {
    const [k, a] = await this.script('removeRegistration', [
      id,
      expected ?? '',
      generation,
      DELETION_MEMORY_MS,
      DELETION_MEMORY_MAX,
      Date.now(),
    ]);
    const kind = String(k);
    switch (kind) {
      case 'changed':
      case 'removed':
        return { kind, version: Number(a) };
      case 'missing':
      case 'generation':
        return { kind };
      default:
        throw unexpected(kind);
    }
  }

  async seed(
    known: string | undefined,
    records: readonly StoredRegistration[],
    deleted: readonly Tombstone[] = [],
    mode: SeedMode = 'reset',
  ): Promise<SeedResult> {
    const entries = seedEntries(records, deleted).flatMap((e) =>
      e.kind === 'live'
        ? [e.record.upstream.id, e.record.version, 'live', serialize(e.record)]
        : [e.tombstone.id, e.tombstone.version, 'dead', e.tombstone.deletedAt],
    );
    const [generation, written, removed] = await this.script('seedRegistrations', [
      known ?? '',
      randomUUID(),
      DELETION_MEMORY_MS,
      DELETION_MEMORY_MAX,
      Date.now(),
      mode,
      ...entries,
    ]);
    return {
      generation: String(generation),
      written: Number(written),
      removed: Number(removed),
    };
  }

  close(): Promise<void> {
    return quitRedis(this.redis);
  }

  private script(
    name: 'createRegistration' | 'replaceRegistration' | 'removeRegistration' | 'seedRegistrations',
    args: readonly (string | number)[],
  ): Promise<Reply> {
    return this.run(() =>
      this.redis[name](this.key, this.metaKey, this.tombstonesKey, this.seededKey, ...args),
    );
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      if (err instanceof RegistrationStoreUnavailableError) throw err;
      throw new RegistrationStoreUnavailableError(
        `Redis did not answer (${err instanceof Error ? err.name : typeof err})`,
        redisOutcomeUnknown(err),
      );
    }
  }
}

function unexpected(kind: unknown): Error {
  return new RegistrationStoreUnavailableError(`Redis answered ${String(kind)}`);
}
