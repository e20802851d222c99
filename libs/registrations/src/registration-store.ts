import { randomUUID } from 'node:crypto';
import { registrationAudienceKey, upstreamNamePrefix } from '@app/config';
import { storedJsonLimit } from '@app/redis';
import { MANAGEMENT_MAX_BODY_BYTES } from '@app/wire';
import type { StoredRegistration } from './registration-record';
import type { Tombstone } from './registration-tombstones';

/**
 * The store could not be read or written (Redis down or slow). `outcomeUnknown`: a write was
 * sent and not answered in time, so it may still run when Redis wakes (redisOutcomeUnknown);
 * otherwise nothing was changed.
 */
export class RegistrationStoreUnavailableError extends Error {
  override readonly name = 'RegistrationStoreUnavailableError';

  constructor(
    message: string,
    readonly outcomeUnknown = false,
  ) {
    super(message);
  }
}

/**
 * What the store holds, read in one step. `generation` is the store's marker (written once
 * when the store is first used): absent from a store that was never used, and from one that
 * lost its data (Redis restarted without it, was flushed, failed over to an empty replica),
 * which tells such a store from one whose registrations were all deleted.
 */
export interface StoreSnapshot {
  readonly generation: string | undefined;
  readonly registrations: readonly StoredRegistration[];
  /** Registrations deleted lately (registration-tombstones.ts), with the version deleted. */
  readonly deleted: readonly Tombstone[];
  /**
   * Which server's data this is: the Redis master's replication id, a new one after a failover
   * or a restart (undefined: not known, or a memory store).
   */
  readonly server?: string;
}

/**
 * `reset`: the store lost its marker (or another replica re-seeded it): merge into it.
 * `restore`: the same marker on another master (a failover): write back what it lacks.
 */
export type SeedMode = 'reset' | 'restore';

/** A registration to create: the store assigns the version. */
export type NewRegistration = Omit<StoredRegistration, 'version'>;

/**
 * A write's outcome. `generation`: the store's marker is not the one this replica read (the
 * store was reset, or re-seeded by another replica): nothing was written; read it again.
 */
export type CreateResult =
  | { readonly kind: 'created'; readonly version: number }
  | { readonly kind: 'idTaken' }
  /** `namePrefix` equals, starts with or begins another registered upstream's (`id`, `prefix`). */
  | { readonly kind: 'prefixTaken'; readonly id: string; readonly prefix: string }
  /** Its tokenExchange audience is another stored registration's (`id`): the first keeps it. */
  | { readonly kind: 'audienceTaken'; readonly id: string }
  | { readonly kind: 'full' }
  | { readonly kind: 'generation' };

export type ReplaceResult =
  | { readonly kind: 'replaced'; readonly version: number }
  | { readonly kind: 'missing' }
  /** The stored record's version is not the expected one: it changed since it was read. */
  | { readonly kind: 'changed'; readonly version: number }
  | { readonly kind: 'generation' };

export type RemoveResult =
  /** `version`: the version of the record removed (its tombstone's). */
  | { readonly kind: 'removed'; readonly version: number }
  | { readonly kind: 'missing' }
  | { readonly kind: 'changed'; readonly version: number }
  | { readonly kind: 'generation' };

/**
 * After a seed: the store's generation now, how many of the given records were written, and
 * how many stored records the given deletions removed (re-seeded by a replica that had not
 * seen the deletion).
 */
export interface SeedResult {
  readonly generation: string;
  readonly written: number;
  readonly removed: number;
}

/**
 * Where registered upstreams live (operations §15): Redis when REDIS_URL is set (shared by
 * the replicas, kept across restarts), memory otherwise. Every write is atomic in the store:
 * an id, and a published-name prefix, is taken once (two replicas never both take one); a
 * replace or remove with an expected version is a compare-and-set. Every method throws
 * RegistrationStoreUnavailableError when the store cannot answer.
 */
export interface RegistrationStore {
  readonly kind: 'redis' | 'memory';
  read(): Promise<StoreSnapshot>;
  /**
   * Stores a new registration unless its id is taken, its prefix (`upstreamNamePrefix`)
   * overlaps another stored one's, its tokenExchange audience (`registrationAudienceKey`) is
   * another stored one's, or `maxRegistrations` are stored.
   */
  create(
    registration: NewRegistration,
    generation: string,
    maxRegistrations: number,
  ): Promise<CreateResult>;
  /** Replaces the registration if its stored version is `expectedVersion`. */
  replace(
    registration: NewRegistration,
    expectedVersion: number,
    generation: string,
  ): Promise<ReplaceResult>;
  /** Removes it; with `expectedVersion`, only if that is its stored version. */
  remove(
    id: string,
    expectedVersion: number | undefined,
    generation: string,
  ): Promise<RemoveResult>;
  /**
   * Gives a store without a marker one, or adopts the marker another replica wrote, and merges
   * the given records and deletions into it per id (registration-tombstones.ts `supersedes`):
   * an id the store lacks is written; one another replica re-seeded is replaced by a higher
   * version, or removed by a deletion of an equal or higher one; one written since the reset
   * stays. `known`: the generation the records were read under; absent for a replica that
   * never read the store (it gives none). `mode` `restore`: the store kept its marker but is
   * served by another master (SeedMode): only what it lacks, or holds older, is written.
   */
  seed(
    known: string | undefined,
    records: readonly StoredRegistration[],
    deleted?: readonly Tombstone[],
    mode?: SeedMode,
  ): Promise<SeedResult>;
  close(): Promise<void>;
}

/**
 * Whether two published-name prefixes could publish the same name (the rule of
 * `upstreamProblems`: equal, or one starts with the other); `""` is the sole-source rule's.
 */
export function prefixesOverlap(a: string, b: string): boolean {
  return a !== '' && b !== '' && (a.startsWith(b) || b.startsWith(a));
}

/** Registrations of this process only: lost at restart, unseen by other replicas. */
export class MemoryRegistrationStore implements RegistrationStore {
  readonly kind = 'memory';
  private readonly entries = new Map<string, StoredRegistration>();
  private readonly generation = randomUUID();
  private counter = 0;

  read(): Promise<StoreSnapshot> {
    return Promise.resolve({
      generation: this.generation,
      registrations: [...this.entries.values()],
      deleted: [],
    });
  }

  create(registration: NewRegistration, _generation: string, max: number): Promise<CreateResult> {
    const id = registration.upstream.id;
    if (this.entries.has(id)) return Promise.resolve({ kind: 'idTaken' });
    const prefix = upstreamNamePrefix(registration.upstream);
    const audience = registrationAudienceKey(registration.upstream);
    for (const other of this.entries.values()) {
      const theirs = upstreamNamePrefix(other.upstream);
      if (prefixesOverlap(prefix, theirs))
        return Promise.resolve({ kind: 'prefixTaken', id: other.upstream.id, prefix: theirs });
      if (audience !== undefined && registrationAudienceKey(other.upstream) === audience)
        return Promise.resolve({ kind: 'audienceTaken', id: other.upstream.id });
    }
    if (this.entries.size >= max) return Promise.resolve({ kind: 'full' });
    const version = ++this.counter;
    this.entries.set(id, { ...registration, version });
    return Promise.resolve({ kind: 'created', version });
  }

  replace(registration: NewRegistration, expected: number): Promise<ReplaceResult> {
    const current = this.entries.get(registration.upstream.id);
    if (current === undefined) return Promise.resolve({ kind: 'missing' });
    if (current.version !== expected)
      return Promise.resolve({ kind: 'changed', version: current.version });
    const version = ++this.counter;
    this.entries.set(registration.upstream.id, { ...registration, version });
    return Promise.resolve({ kind: 'replaced', version });
  }

  remove(id: string, expected: number | undefined): Promise<RemoveResult> {
    const current = this.entries.get(id);
    if (current === undefined) return Promise.resolve({ kind: 'missing' });
    if (expected !== undefined && current.version !== expected)
      return Promise.resolve({ kind: 'changed', version: current.version });
    this.entries.delete(id);
    return Promise.resolve({ kind: 'removed', version: current.version });
  }

  seed(): Promise<SeedResult> {
    return Promise.resolve({ generation: this.generation, written: 0, removed: 0 });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The JSON of a stored record without its opening brace: the store puts the version first.
 * `audienceKey` beside the fields: the tokenExchange audience as compared, which the store's
 * CREATE script claims (it cannot parse a URL as registration-credentials.ts does); parseStored
 * leaves it out.
 */
export function serializeTail(r: NewRegistration): string {
  const audienceKey = registrationAudienceKey(r.upstream);
  return JSON.stringify({ v: 1, ...r, version: undefined, audienceKey }).slice(1);
}

/** The whole JSON of a stored record (as a seed writes it back). */
export function serialize(r: StoredRegistration): string {
  return `{"version":${r.version},${serializeTail(r)}`;
}

/**
 * The longest stored record parsed: its upstream comes from at most two management bodies (a
 * POST and a PATCH merged into it), so anything longer is no record this gateway wrote.
 */
const MAX_STORED_CHARS = storedJsonLimit(2 * MANAGEMENT_MAX_BODY_BYTES);

/** A stored registration, or undefined for garbage (never a registration) or a value too long to be one. */
export function parseStored(raw: string, id: string): StoredRegistration | undefined {
  if (raw.length > MAX_STORED_CHARS) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<StoredRegistration> & { v?: unknown };
    if (
      value.v !== 1 ||
      typeof value.upstream !== 'object' ||
      value.upstream === null ||
      value.upstream.id !== id ||
      typeof value.createdAt !== 'number' ||
      typeof value.updatedAt !== 'number' ||
      typeof value.createdBy !== 'string' ||
      typeof value.updatedBy !== 'string' ||
      (value.version !== undefined && !Number.isSafeInteger(value.version))
    )
      return undefined;
    return {
      upstream: value.upstream,
      createdAt: value.createdAt,
      updatedAt: value.updatedAt,
      createdBy: value.createdBy,
      updatedBy: value.updatedBy,
      version: value.version ?? 0,
    };
  } catch {
    return undefined;
  }
}
