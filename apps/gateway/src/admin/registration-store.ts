import { Logger } from '@nestjs/common';
import type { Redis, RedisOptions } from 'ioredis';
import type { GatewayConfig } from '@app/config';
import type { StoredRegistration } from './admin-upstream-record';

/** The store could not be read or written (Redis down or slow); nothing was changed. */
export class RegistrationStoreUnavailableError extends Error {
  override readonly name = 'RegistrationStoreUnavailableError';
}

/**
 * Where registered upstreams live (issue 13 §2): Redis when REDIS_URL is set (shared by the
 * replicas, kept across restarts), memory otherwise. Every method throws
 * RegistrationStoreUnavailableError when the store cannot answer.
 */
export interface RegistrationStore {
  readonly kind: 'redis' | 'memory';
  list(): Promise<StoredRegistration[]>;
  /** Stores a new registration; false when the id is taken already (nothing written). */
  create(registration: StoredRegistration): Promise<boolean>;
  /** Replaces an existing registration; false when there is none (nothing written). */
  replace(registration: StoredRegistration): Promise<boolean>;
  /** false when there was none. */
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Registrations of this process only: lost at restart, unseen by other replicas. */
export class MemoryRegistrationStore implements RegistrationStore {
  readonly kind = 'memory';
  private readonly entries = new Map<string, StoredRegistration>();

  list(): Promise<StoredRegistration[]> {
    return Promise.resolve([...this.entries.values()]);
  }

  create(registration: StoredRegistration): Promise<boolean> {
    if (this.entries.has(registration.upstream.id)) return Promise.resolve(false);
    this.entries.set(registration.upstream.id, registration);
    return Promise.resolve(true);
  }

  replace(registration: StoredRegistration): Promise<boolean> {
    if (!this.entries.has(registration.upstream.id)) return Promise.resolve(false);
    this.entries.set(registration.upstream.id, registration);
    return Promise.resolve(true);
  }

  remove(id: string): Promise<boolean> {
    return Promise.resolve(this.entries.delete(id));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Replaces a field only when it exists (HSET would create it). */
const REPLACE_IF_EXISTS = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0`;

type RedisWithReplace = Redis & {
  replaceRegistration(key: string, id: string, value: string): Promise<number>;
};

/**
 * Registrations in one Redis hash, `<keyPrefix>:{<identity>}:admin:upstreams`, field = the
 * upstream id, value = the StoredRegistration as JSON (`v: 1`). No expiry: a registration
 * lives until it is deleted. Creation is HSETNX, so two replicas never both take an id.
 */
export class RedisRegistrationStore implements RegistrationStore {
  readonly kind = 'redis';
  private readonly logger = new Logger('Admin');
  private readonly redis: RedisWithReplace;
  readonly key: string;

  constructor(
    url: string,
    config: Pick<GatewayConfig, 'mcp'>,
    createClient: (url: string, options: RedisOptions) => Redis,
  ) {
    const r = config.mcp.redis;
    this.key = `${r.keyPrefix}:{${config.mcp.identity}}:admin:upstreams`;
    this.redis = createClient(url, {
      enableOfflineQueue: true,
      maxRetriesPerRequest: 0,
      commandTimeout: Math.max(r.commandTimeoutMillis, 1000),
      connectTimeout: r.connectTimeoutMillis,
      retryStrategy: (attempt) => Math.min(250 * attempt, 5000),
    }) as RedisWithReplace;
    this.redis.defineCommand('replaceRegistration', { numberOfKeys: 1, lua: REPLACE_IF_EXISTS });
    this.redis.on('error', () => undefined);
  }

  async list(): Promise<StoredRegistration[]> {
    const all = await this.run(() => this.redis.hgetall(this.key));
    const out: StoredRegistration[] = [];
    for (const [id, raw] of Object.entries(all)) {
      const parsed = parseStored(raw, id);
      if (parsed === undefined)
        this.logger.warn(`Registration ${id} in Redis is unreadable; ignored`);
      else out.push(parsed);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || compare(a.upstream.id, b.upstream.id));
  }

  async create(registration: StoredRegistration): Promise<boolean> {
    const id = registration.upstream.id;
    return (await this.run(() => this.redis.hsetnx(this.key, id, serialize(registration)))) === 1;
  }

  async replace(registration: StoredRegistration): Promise<boolean> {
    const id = registration.upstream.id;
    const done = await this.run(() =>
      this.redis.replaceRegistration(this.key, id, serialize(registration)),
    );
    return done === 1;
  }

  async remove(id: string): Promise<boolean> {
    return (await this.run(() => this.redis.hdel(this.key, id))) === 1;
  }

  async close(): Promise<void> {
    await Promise.race([
      this.redis.quit().catch(() => undefined),
      new Promise((r) => setTimeout(r, 1000)),
    ]);
    this.redis.disconnect();
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw new RegistrationStoreUnavailableError(
        `Redis did not answer (${err instanceof Error ? err.name : typeof err})`,
      );
    }
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function serialize(r: StoredRegistration): string {
  return JSON.stringify({ v: 1, ...r });
}

/** A stored registration, or undefined for garbage (never a registration). */
export function parseStored(raw: string, id: string): StoredRegistration | undefined {
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
      typeof value.updatedBy !== 'string'
    )
      return undefined;
    return {
      upstream: value.upstream,
      createdAt: value.createdAt,
      updatedAt: value.updatedAt,
      createdBy: value.createdBy,
      updatedBy: value.updatedBy,
    };
  } catch {
    return undefined;
  }
}
