import { Logger, type Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import {
  LOST_RANGES_LUA,
  MASTER_REPLID_LUA,
  MasterReplidReply,
  openRedis,
  quitRedis,
  redisUseOptions,
  StoreAttempts,
  storedJsonLimit,
  type RedisClient,
} from '@app/redis';
import { MANAGEMENT_MAX_BODY_BYTES } from '@app/wire';

/** A virtual server registered at runtime, as stored (docs/operations.md §16). */
export interface StoredServer {
  /** The `mcp.virtualServers[]` fields, as the registration gave them (checked). */
  readonly server: Readonly<Record<string, unknown>>;
  /** Bumped by every write of the server: what `If-Match` and a replace compare against. */
  readonly version: number;
  readonly registeredAt: string;
  readonly registeredBy: string;
  /** The last replace, when there was one. */
  readonly updatedAt?: string;
  readonly updatedBy?: string;
}

/**
 * What the store holds. `generation`: set when the store's first write after it was empty
 * created its counter; undefined for a store that lost its data (or was never used). A
 * generation that changed since a replica read it means the store lost its data and another
 * replica wrote back what it served: this replica writes back its own as well.
 */
export interface ServerStoreSnapshot {
  readonly servers: ReadonlyMap<string, StoredServer>;
  readonly generation: string | undefined;
  /**
   * Which server's data this is: the Redis master's replication id, a new one after a failover
   * or a restart (undefined: not known, or a memory store). Another one under the same
   * generation: the last writes may be lost, and each replica writes back those it serves
   * (restore, `failover`).
   */
  readonly server?: string;
}

/**
 * How restore decides. `reset`: the store lost its data (ServerStoreSnapshot.generation): a
 * server it lacks is written back. `failover`: the same generation on another master: only a
 * server whose version one of the writes a failover lost drew (RESTORE_SCRIPT below);
 * one it lacks at another version was deleted.
 */
export type ServerRestoreMode = 'reset' | 'failover';

export type ServerWrite =
  | { readonly kind: 'written'; readonly version: number }
  /** create: the id is stored already. */
  | { readonly kind: 'taken' }
  /** create: the store holds `max` servers already. */
  | { readonly kind: 'full' }
  /** replace, remove: no such id. */
  | { readonly kind: 'missing' }
  /** replace, remove: the stored version is not the expected one. */
  | { readonly kind: 'changed' }
  /** The store did not answer: nothing was written. */
  /**
   * The store did not answer; `outcomeUnknown`: the write may still run when Redis wakes (it
   * timed out after it was sent), so it cannot be called unchanged.
   */
  | { readonly kind: 'unavailable'; readonly outcomeUnknown: boolean };

/**
 * Where registered virtual servers live (docs/operations.md §16 "Registered at runtime"): Redis
 * when it is configured (every replica reads it; kept across restarts), this process's memory
 * otherwise. Each write is atomic in the store: an id is taken once, and a replace or remove
 * with an expected version is a compare-and-set.
 */
export interface ServerStore {
  /** undefined: the store did not answer. */
  read(): Promise<ServerStoreSnapshot | undefined>;
  /**
   * `max`: how many servers the store may hold, counted in the same atomic step as the id is
   * taken, so replicas that each counted one place left cannot both take it (undefined: no bound).
   */
  create(id: string, record: Omit<StoredServer, 'version'>, max?: number): Promise<ServerWrite>;
  /** `expected`: the version the writer read (undefined: whatever is stored). */
  replace(
    id: string,
    record: Omit<StoredServer, 'version'>,
    expected: number | undefined,
  ): Promise<ServerWrite>;
  remove(id: string, expected: number | undefined): Promise<ServerWrite>;
  /**
   * Writes a record back as it was (its version too) unless the id is stored at that version or
   * a later one (`taken`; an earlier one is the copy before a replace the store lost) or, in
   * mode `failover`, its version is none a lost write drew (`missing`: it was deleted), and
   * keeps the counter above its version: a store that lost its data never hands out a version
   * again.
   */
  restore(id: string, record: StoredServer, mode?: ServerRestoreMode): Promise<ServerWrite>;
  close(): Promise<void>;
}

export const SERVER_STORE = Symbol('SERVER_STORE');

/** This process only: registrations end with it. */
export class MemoryServerStore implements ServerStore {
  private readonly servers = new Map<string, StoredServer>();
  private version = 0;

  read(): Promise<ServerStoreSnapshot> {
    return Promise.resolve({ servers: new Map(this.servers), generation: 'memory' });
  }

  create(id: string, record: Omit<StoredServer, 'version'>, max?: number): Promise<ServerWrite> {
    if (this.servers.has(id)) return Promise.resolve({ kind: 'taken' });
    if (max !== undefined && this.servers.size >= max) return Promise.resolve({ kind: 'full' });
    return Promise.resolve(this.put(id, record));
  }

  replace(
    id: string,
    record: Omit<StoredServer, 'version'>,
    expected: number | undefined,
  ): Promise<ServerWrite> {
    const refusal = this.refusal(id, expected);
    return Promise.resolve(refusal ?? this.put(id, record));
  }

  remove(id: string, expected: number | undefined): Promise<ServerWrite> {
    const refusal = this.refusal(id, expected);
    if (refusal !== undefined) return Promise.resolve(refusal);
    this.servers.delete(id);
    return Promise.resolve({ kind: 'written', version: ++this.version });
  }

  restore(id: string, record: StoredServer): Promise<ServerWrite> {
    const stored = this.servers.get(id);
    if (stored !== undefined && stored.version >= record.version)
      return Promise.resolve({ kind: 'taken' });
    this.servers.set(id, record);
    this.version = Math.max(this.version, record.version);
    return Promise.resolve({ kind: 'written', version: record.version });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private refusal(id: string, expected: number | undefined): ServerWrite | undefined {
    const stored = this.servers.get(id);
    if (stored === undefined) return { kind: 'missing' };
    return expected !== undefined && stored.version !== expected ? { kind: 'changed' } : undefined;
  }

  private put(id: string, record: Omit<StoredServer, 'version'>): ServerWrite {
    const version = ++this.version;
    this.servers.set(id, { ...record, version });
    return { kind: 'written', version };
  }
}

/**
 * Notes the master a write runs on (KEYS[4]: its replication id, a new one after a failover or
 * a restart). On another master than the one that wrote last, the counter that came over may be
 * below versions the old master handed out in writes that never reached this one (asynchronous
 * replication): drawing on from it would give such a version to another server, and an If-Match
 * of the lost write would match it. The counter is raised past them (more than a failover can
 * lose, or to the time in ms), and the range raised over is added to the last masters' ranges
 * (KEYS[5], LOST_RANGES_LUA in @app/redis): what a restore after a failover writes back
 * (RESTORE_SCRIPT; docs/operations.md §5 "What a failover may lose"). The first note (a new
 * store, or one from before this) has nothing to compare; Redis may refuse INFO to the user
 * (ACL): then nothing is noted.
 */
const ON_MASTER = `${MASTER_REPLID_LUA}${LOST_RANGES_LUA}
local function onMaster(now)
  local id = masterReplid()
  if not id then return end
  local was = redis.call('GET', KEYS[4])
  if was == id then return end
  redis.call('SET', KEYS[4], id)
  if not was then return end
  local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
  local raised = raisedPast(counter, now)
  redis.call('SET', KEYS[2], string.format('%d', raised))
  redis.call('SET', KEYS[5],
    lostRangesAdd(lostRangesOf(redis.call('GET', KEYS[5])), counter, raised))
end
`;

/**
 * KEYS: the servers hash, the counter (every write bumps it; its absence marks a store that lost
 * its data), the generation (set with the counter), the master that wrote last and the last
 * masters' lost ranges (ON_MASTER).
 * ARGV: id, record JSON without version (a non-empty object), mode (create | replace | remove), expected
 * version ('' for any), now in ms, how many servers the hash may hold (create; '' for any). Returns
 * the new version, or 0 taken, -1 missing, -2 changed, -3 full.
 * A missing counter starts from now in ms: a store that lost its data lost the counter with it,
 * and a replica that has not written back what another replica handed out just before must not
 * hand out those versions again (an If-Match read before the loss would match another server).
 */
const WRITE_SCRIPT = `${ON_MASTER}
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] == 'create' then
  if stored then return 0 end
  if ARGV[6] ~= '' and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[6]) then return -3 end
else
  if not stored then return -1 end
  if ARGV[4] ~= '' and tostring(cjson.decode(stored).version) ~= ARGV[4] then return -2 end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SET', KEYS[2], ARGV[5])
  redis.call('SET', KEYS[3], ARGV[5])
end
onMaster(tonumber(ARGV[5]))
local version = redis.call('INCR', KEYS[2])
if ARGV[3] == 'remove' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  -- the record as written, its version put first (cjson would turn an empty list into {})
  redis.call('HSET', KEYS[1], ARGV[1], '{"version":' .. version .. ',' .. string.sub(ARGV[2], 2))
end
return version
`;

/**
 * KEYS as WRITE_SCRIPT's. ARGV: id, record JSON (with its version), version, now in ms (a missing
 * counter and generation start there, as in WRITE_SCRIPT), mode (ServerRestoreMode). Returns the
 * version written, or 0 the id is stored at this version or a later one, -1 (mode `failover`) the version is none a lost write
 * drew. A write a failover lost drew a version above the counter the new master came over with
 * (it replicates with each write): above the counter if nothing noted the master yet (INFO
 * refused), else in a range the counter was raised over when this master, or one of the last
 * before it, took over (ON_MASTER, run first here): no write on them drew from it. A server the
 * store lacks at another version was deleted, and stays so. A server the store holds at a lower
 * version is the copy before a replace the store lost (a replica that had not read the replace
 * wrote it back first, or the master came back from a copy saved before it): the replace is
 * written over it, under the same rules. Every write since the loss drew a version above any
 * drawn before it (the counter starts again from the time in ms, or is raised past the lost
 * ones), so a lower stored version is never a write made since. A store without a counter lost its
 * data: what it lacks is written back whatever the mode.
 */
const RESTORE_SCRIPT = `${ON_MASTER}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local ok, r = pcall(cjson.decode, raw)
  if not ok or type(r) ~= 'table' or type(r.version) ~= 'number'
    or r.version >= tonumber(ARGV[3]) then return 0 end
end
local lost = redis.call('EXISTS', KEYS[2]) == 0
if lost then
  redis.call('SET', KEYS[2], ARGV[4])
  redis.call('SET', KEYS[3], ARGV[4])
end
onMaster(tonumber(ARGV[4]))
local version = tonumber(ARGV[3])
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[5] == 'failover' and not lost and version <= current
  and not inLostRanges(version, lostRangesOf(redis.call('GET', KEYS[5]))) then
  return -1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if current < version then redis.call('SET', KEYS[2], ARGV[3]) end
return version
`;

/** The longest stored record parsed: a server comes from one management body (a POST or a PUT). */
const MAX_STORED_CHARS = storedJsonLimit(MANAGEMENT_MAX_BODY_BYTES);

function isStored(value: unknown): value is StoredServer {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.server === 'object' &&
    v.server !== null &&
    typeof v.version === 'number' &&
    typeof v.registeredAt === 'string' &&
    typeof v.registeredBy === 'string'
  );
}

/**
 * The servers in a Redis hash `<keyPrefix>:{<identity>}:virtual-servers` (id → record), a
 * counter `…:virtual-servers-version`, the store's generation `…:virtual-servers-generation`,
 * the master that wrote last `…:virtual-servers-master` and the versions failovers to the last
 * masters may have lost `…:virtual-servers-lost` (ON_MASTER), all under the identity's hash tag
 * (one Cluster slot); each write is one script.
 */
export class RedisServerStore implements ServerStore {
  private readonly logger = new Logger('Redis');
  private readonly hashKey: string;
  private readonly versionKey: string;
  private readonly generationKey: string;
  private readonly masterKey: string;
  private readonly lostKey: string;
  private readonly attempts: StoreAttempts;
  /** The master's replication id from a read's INFO reply (said once when Redis refuses INFO). */
  private readonly masterReplid = new MasterReplidReply(
    (text) => this.logger.warn(text),
    'registered virtual servers',
  );

  /** @param redis a connection for the `virtualServers` use (libs/redis) */
  constructor(
    private readonly redis: RedisClient,
    config: GatewayConfig,
  ) {
    const tag = `${config.mcp.redis.keyPrefix}:{${config.mcp.identity}}`;
    this.hashKey = `${tag}:virtual-servers`;
    this.versionKey = `${tag}:virtual-servers-version`;
    this.generationKey = `${tag}:virtual-servers-generation`;
    this.masterKey = `${tag}:virtual-servers-master`;
    this.lostKey = `${tag}:virtual-servers-lost`;
    this.redis.on('error', () => undefined);
    this.attempts = new StoreAttempts(
      this.logger,
      'registered virtual servers',
      'this replica serves the ones it read last',
    );
  }

  async read(): Promise<ServerStoreSnapshot | undefined> {
    const answer = await this.attempts.run(async () => {
      const results = await this.redis
        .multi()
        .hgetall(this.hashKey)
        .get(this.versionKey)
        .get(this.generationKey)
        // the master's replication id, from the node holding these keys (a Cluster runs a
        // script on the node of its key): a new one after a failover or a restart
        .eval("return redis.call('INFO', 'replication')", 1, this.hashKey)
        .exec();
      // INFO may be refused (serverOf); the store's own keys must answer
      if (results === null || results.slice(0, 3).some(([err]) => err !== null))
        throw new Error('MULTI failed');
      return results;
    });
    if (answer === undefined) return undefined;
    const [all, version, generation] = answer.slice(0, 3).map(([, value]) => value) as [
      Record<string, string>,
      string | null,
      string | null,
    ];
    const servers = new Map<string, StoredServer>();
    for (const [id, text] of Object.entries(all)) {
      // longer than any record written from a body: not served, and not parsed
      if (text.length > MAX_STORED_CHARS) continue;
      try {
        const parsed: unknown = JSON.parse(text);
        // a field another version wrote, or damaged: not served
        if (isStored(parsed)) servers.set(id, parsed);
      } catch {
        // as above
      }
    }
    // a counter without a generation: written by a gateway before generations (one of its own)
    return {
      servers,
      generation: generation ?? (version === null ? undefined : 'unnamed'),
      server: this.masterReplid.of(answer[3]),
    };
  }

  create(id: string, record: Omit<StoredServer, 'version'>, max?: number): Promise<ServerWrite> {
    return this.write(id, record, 'create', undefined, max);
  }

  replace(
    id: string,
    record: Omit<StoredServer, 'version'>,
    expected: number | undefined,
  ): Promise<ServerWrite> {
    return this.write(id, record, 'replace', expected);
  }

  remove(id: string, expected: number | undefined): Promise<ServerWrite> {
    return this.write(id, undefined, 'remove', expected);
  }

  async restore(
    id: string,
    record: StoredServer,
    mode: ServerRestoreMode = 'reset',
  ): Promise<ServerWrite> {
    const answer = await this.attempts.run(
      () =>
        this.redis.eval(
          RESTORE_SCRIPT,
          5,
          ...this.keys(),
          id,
          JSON.stringify(record),
          String(record.version),
          Date.now(),
          mode,
        ) as Promise<number>,
    );
    if (answer === undefined) return this.unavailable();
    if (answer === 0) return { kind: 'taken' };
    if (answer === -1) return { kind: 'missing' };
    return { kind: 'written', version: answer };
  }

  async close(): Promise<void> {
    await quitRedis(this.redis);
  }

  private keys(): [string, string, string, string, string] {
    return [this.hashKey, this.versionKey, this.generationKey, this.masterKey, this.lostKey];
  }

  private unavailable(): ServerWrite {
    return { kind: 'unavailable', outcomeUnknown: this.attempts.lastOutcomeUnknown };
  }

  private async write(
    id: string,
    record: Omit<StoredServer, 'version'> | undefined,
    mode: 'create' | 'replace' | 'remove',
    expected: number | undefined,
    max?: number,
  ): Promise<ServerWrite> {
    const answer = await this.attempts.run(
      () =>
        this.redis.eval(
          WRITE_SCRIPT,
          5,
          ...this.keys(),
          id,
          JSON.stringify(record ?? {}),
          mode,
          expected === undefined ? '' : String(expected),
          Date.now(),
          max === undefined ? '' : String(max),
        ) as Promise<number>,
    );
    if (answer === undefined) return this.unavailable();
    if (answer === 0) return { kind: 'taken' };
    if (answer === -1) return { kind: 'missing' };
    if (answer === -2) return { kind: 'changed' };
    if (answer === -3) return { kind: 'full' };
    return { kind: 'written', version: answer };
  }
}

/** Redis when the gateway has it (every replica reads it), else this process's memory. */
export const serverStoreProvider: Provider = {
  provide: SERVER_STORE,
  useFactory: async (config: GatewayConfig): Promise<ServerStore> => {
    if (config.redisServer === undefined) return new MemoryServerStore();
    const client = await openRedis(
      config.redisServer,
      redisUseOptions('virtualServers', config.mcp.redis),
    );
    return new RedisServerStore(client, config);
  },
  inject: [GATEWAY_CONFIG],
};
