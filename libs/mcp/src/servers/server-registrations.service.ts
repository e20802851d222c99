import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import {
  checkVirtualServer,
  GATEWAY_CONFIG,
  VirtualServerConfig,
  type GatewayConfig,
} from '@app/config';
import { ResourceServer } from '@app/identity';
import {
  SERVER_STORE,
  type ServerStore,
  type ServerWrite,
  type StoredServer,
} from './server-store';
import { VirtualServers, type VirtualServerStatus } from './virtual-servers.service';

/** How often a replica reads the store for servers another replica registered, ms. */
export const SERVER_SYNC_MILLIS = 2_000;
/** How long a replica remembers a deletion it made, against a write-back of the server, ms. */
export const DELETIONS_KEPT_MS = 60 * 60 * 1000;
/** Registered virtual servers at most. */
export const MAX_REGISTERED_SERVERS = 200;

/** The If-Match of a change: `*`, or the versions it names (parsed by the controller). */
export type ServerIfMatch = '*' | readonly number[];

/** An admin answer (apps/gateway/src/management/admin-gate.ts maps `reason` to a status). */
export type ServerAdminOutcome<T> =
  | { readonly ok: true; readonly status: 200 | 201; readonly body: T; readonly version?: number }
  | {
      readonly ok: false;
      readonly reason: 'invalid' | 'notFound' | 'conflict' | 'unavailable';
      readonly message: string;
      readonly problems?: readonly string[];
    };

/** A registered server as the admin API shows it: its fields and its record. */
export type RegisteredServerView = VirtualServerStatus & {
  readonly registeredAt?: string;
  readonly registeredBy?: string;
  readonly updatedAt?: string;
  readonly updatedBy?: string;
};

/**
 * The store did not answer. A write sent before Redis stopped answering may still run when it
 * wakes (`outcomeUnknown`): then the refusal cannot promise that nothing changed.
 */
function unavailable(outcomeUnknown: boolean) {
  return {
    ok: false,
    reason: 'unavailable',
    message: outcomeUnknown
      ? 'The store of virtual servers (Redis) did not answer in time; the change may still be applied when it does: read the server back (GET /admin/servers) before trying again'
      : 'The store of virtual servers (Redis) did not answer; nothing was changed, try again',
  } as const;
}

/** The registered servers are MAX_REGISTERED_SERVERS already. */
function full() {
  return {
    ok: false,
    reason: 'conflict',
    message: `At most ${MAX_REGISTERED_SERVERS} virtual servers may be registered`,
  } as const;
}

/**
 * Virtual servers registered at runtime (docs/operations.md §16 "Registered at runtime"): checked
 * with the boot rules, written atomically to the store (Redis with REDIS_URL: shared by every
 * replica and kept across restarts; memory otherwise), served on `/mcp/servers/{id}` at once on
 * this replica and within SERVER_SYNC_MILLIS on the others. A configured server's id is never
 * taken. A store that lost its data (Redis restarted empty, flushed, failed over to an empty
 * replica) is written back from what this replica serves, with a warning.
 */
@Injectable()
export class VirtualServerRegistrations implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Admin');
  private applied: ReadonlyMap<string, StoredServer> = new Map();
  /** The ids and versions the store held at the last read. */
  private seen = '';
  /** The store's generation at the last read (ServerStoreSnapshot.generation). */
  private generation?: string;
  /** The Redis master's replication id at the last read (ServerStoreSnapshot.server). */
  private server?: string;
  /** Servers deleted on this replica lately: id → the version deleted, and when. */
  private readonly deleted = new Map<string, { version: number; atMs: number }>();
  /** Stored servers the configuration shadows, warned about: "id:version". */
  private readonly shadowed = new Set<string>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly servers: VirtualServers,
    @Inject(SERVER_STORE) private readonly store: ServerStore,
    @Optional() @Inject(ResourceServer) private readonly resources: ResourceServer | null = null,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.sync(), SERVER_SYNC_MILLIS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.store.close();
  }

  /** Reads the store and serves what it holds; concurrent calls share one read. Never throws. */
  sync(): Promise<void> {
    this.syncing ??= this.read().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  /** Every server, configured ones first (`origin: "config"`, not changed here). */
  list(): { servers: RegisteredServerView[] } {
    return { servers: this.servers.statuses().map((s) => this.viewOf(s)) };
  }

  get(id: string): ServerAdminOutcome<RegisteredServerView> {
    const status = this.servers.statuses().find((s) => s.id === id);
    if (status === undefined) return this.notFound(id);
    return { ok: true, status: 200, body: this.viewOf(status), version: status.version };
  }

  async register(body: unknown, actor: string): Promise<ServerAdminOutcome<RegisteredServerView>> {
    await this.sync();
    const check = checkVirtualServer(body, this.config.mcp, this.servers.ids());
    if (!check.ok) return this.refused(check);
    if (this.applied.size >= MAX_REGISTERED_SERVERS) return full();
    // counted again in the store's write: another replica may have taken the last place since
    const written = await this.store.create(
      check.server.id,
      this.recordOf(check.server, actor),
      MAX_REGISTERED_SERVERS,
    );
    if (written.kind === 'unavailable') return unavailable(written.outcomeUnknown);
    if (written.kind === 'full') {
      await this.sync();
      return full();
    }
    if (written.kind !== 'written')
      return {
        ok: false,
        reason: 'conflict',
        message: 'The virtual server is not valid',
        problems: [`id: "${check.server.id}" is a registered virtual server's`],
      };
    await this.sync();
    return this.answer(check.server.id, 201);
  }

  async replace(
    id: string,
    body: unknown,
    actor: string,
    ifMatch: ServerIfMatch | undefined,
  ): Promise<ServerAdminOutcome<RegisteredServerView>> {
    await this.sync();
    const known = this.registered(id);
    if ('ok' in known) return known;
    const expected = this.expected(known, ifMatch);
    if (typeof expected === 'object') return expected;
    const taken = new Set(this.servers.ids());
    taken.delete(id);
    const check = checkVirtualServer(body, this.config.mcp, taken);
    if (!check.ok) return this.refused(check);
    if (check.server.id !== id)
      return {
        ok: false,
        reason: 'invalid',
        message: 'The virtual server is not valid',
        problems: [`id: must be "${id}", the id in the path (register a new id with POST)`],
      };
    const record = {
      ...this.recordOf(check.server, known.registeredBy),
      registeredAt: known.registeredAt,
      updatedAt: new Date().toISOString(),
      updatedBy: actor,
    };
    const written = await this.store.replace(id, record, expected);
    const refusal = this.writeRefusal(id, written);
    if (refusal !== undefined) return refusal;
    await this.sync();
    return this.answer(id, 200);
  }

  async remove(
    id: string,
    ifMatch: ServerIfMatch | undefined,
  ): Promise<ServerAdminOutcome<{ id: string; deleted: true }>> {
    await this.sync();
    const known = this.registered(id);
    if ('ok' in known) return (await this.removeShadowed(id, ifMatch)) ?? known;
    const expected = this.expected(known, ifMatch);
    if (typeof expected === 'object') return expected;
    const written = await this.store.remove(id, expected);
    const refusal = this.writeRefusal(id, written);
    if (refusal !== undefined) return refusal;
    // the version the deletion drew, not the one read: without If-Match it removed whatever was
    // stored, perhaps a PUT that landed after the read, and every record of the id written
    // before it drew a lower version (a write-back of that PUT must be deleted again too)
    this.rememberDeleted(id, written.kind === 'written' ? written.version : known.version);
    await this.sync();
    return { ok: true, status: 200, body: { id, deleted: true } };
  }

  private async read(): Promise<void> {
    let snapshot = await this.store.read();
    // not answering: the servers read last stay served
    if (snapshot === undefined) return;
    // Lost its data: no generation, or another one than read last (another replica wrote back
    // what it served, which need not be all: it may not have read a registration made here).
    // Every replica writes back what it serves, once per generation; restore never overwrites.
    const lost =
      snapshot.generation === undefined ||
      (this.generation !== undefined && snapshot.generation !== this.generation);
    // The same generation from another master (a failover, a restart): replication is
    // asynchronous, so the servers registered just before may be missing. Each replica writes
    // back those it serves whose version a lost write drew; the store tells them from deleted
    // ones (server-store.ts RESTORE_SCRIPT; docs/operations.md §5 "What a failover may lose").
    const failedOver =
      !lost &&
      this.generation !== undefined &&
      this.server !== undefined &&
      snapshot.server !== undefined &&
      snapshot.server !== this.server;
    if ((lost || failedOver) && this.applied.size > 0) {
      // lacking it, or holding it at an earlier version: the copy before a replace the store
      // lost, written back by a replica that had not read the replace, or the one a master
      // restarted from a saved copy came back with
      const missing = [...this.applied].filter(
        ([id, record]) =>
          (snapshot?.servers.get(id)?.version ?? -1) < record.version &&
          !this.deletedHere(id, record),
      );
      if (missing.length > 0) {
        if (lost)
          this.logger.warn(
            `The store of virtual servers lost its data (Redis restarted empty, was flushed or failed over); writing back the ${missing.length} this replica serves and the store lacks or holds at an earlier version`,
          );
        let written = 0;
        for (const [id, record] of missing) {
          const restored = await this.store.restore(id, record, lost ? 'reset' : 'failover');
          // not written back: the next sync tries again, the servers read last stay served
          if (restored.kind === 'unavailable') return;
          if (restored.kind === 'written') written += 1;
        }
        if (failedOver && written > 0)
          this.logger.warn(
            `The store of virtual servers is served by another Redis master (a failover or a restart); ${written} servers written back that it had lost`,
          );
        snapshot = await this.store.read();
        if (snapshot === undefined) return;
      }
    }
    this.generation = snapshot.generation;
    this.server = snapshot.server;
    this.apply(snapshot.servers);
  }

  private apply(stored: ReadonlyMap<string, StoredServer>): void {
    // the same records as read last: nothing to do (views and lists stay cached)
    const seen = [...stored].map(([id, r]) => `${id}:${r.version}`).join(',');
    if (seen === this.seen) return;
    this.seen = seen;
    const registered = new Map<string, { config: VirtualServerConfig; version: number }>();
    for (const [id, record] of stored) {
      if (this.servers.isConfigured(id)) {
        // registered before the configuration named this id: never served, deleted by its DELETE
        this.warnShadowed(id, record.version);
        continue;
      }
      // deleted here, and written back by a replica that had not read the deletion when the
      // store lost its data: the deletion wins
      if (this.deletedHere(id, record)) {
        void this.store.remove(id, record.version);
        continue;
      }
      // checked when written; read back through the same model, a damaged record is skipped
      const check = checkVirtualServer(record.server, { virtualServers: [] }, new Set());
      if (check.ok && check.server.id === id)
        registered.set(id, { config: check.server, version: record.version });
    }
    for (const id of this.applied.keys())
      if (!registered.has(id)) this.resources?.removeServerResource(id);
    for (const id of registered.keys()) this.resources?.addServerResource(id);
    this.servers.applyRegistered(registered);
    this.applied = new Map([...stored].filter(([id]) => registered.has(id)));
  }

  /** Deleted on this replica lately, at this version or a later one. */
  private deletedHere(id: string, record: StoredServer): boolean {
    const deleted = this.deleted.get(id);
    return deleted !== undefined && record.version <= deleted.version;
  }

  /**
   * The DELETE of a stored server whose id the configuration took over later (never served:
   * `apply` skips it): the stored record goes, freeing its place under MAX_REGISTERED_SERVERS;
   * the configured server stays. undefined when the id is not such a record.
   */
  private async removeShadowed(
    id: string,
    ifMatch: ServerIfMatch | undefined,
  ): Promise<ServerAdminOutcome<{ id: string; deleted: true }> | undefined> {
    if (!this.servers.isConfigured(id)) return undefined;
    const stored = (await this.store.read())?.servers.get(id);
    if (stored === undefined) return undefined;
    const expected = this.expected(stored, ifMatch);
    if (typeof expected === 'object') return expected;
    const written = await this.store.remove(id, expected);
    const refusal = this.writeRefusal(id, written);
    if (refusal !== undefined) return refusal;
    this.rememberDeleted(id, written.kind === 'written' ? written.version : stored.version);
    return { ok: true, status: 200, body: { id, deleted: true } };
  }

  /** One warning per stored record the configuration shadows (apply runs on every change). */
  private warnShadowed(id: string, version: number): void {
    const key = `${id}:${version}`;
    if (this.shadowed.has(key)) return;
    if (this.shadowed.size >= MAX_REGISTERED_SERVERS) this.shadowed.clear();
    this.shadowed.add(key);
    this.logger.warn(
      `Registered virtual server "${id}" is not served: the configuration (mcp.virtualServers) now has a server of that id; DELETE /admin/servers/${id} removes the stored one`,
    );
  }

  /** Deletions made here, kept DELETIONS_KEPT_MS: what a write-back must not bring back. */
  private rememberDeleted(id: string, version: number, nowMs = Date.now()): void {
    for (const [known, entry] of this.deleted)
      if (entry.atMs + DELETIONS_KEPT_MS < nowMs) this.deleted.delete(known);
    this.deleted.set(id, { version, atMs: nowMs });
  }

  private recordOf(server: VirtualServerConfig, actor: string): Omit<StoredServer, 'version'> {
    // the fields as checked (defaults filled in), never anything else the body held
    return {
      server: JSON.parse(JSON.stringify(server)) as Record<string, unknown>,
      registeredAt: new Date().toISOString(),
      registeredBy: actor,
    };
  }

  private registered(id: string): StoredServer | ServerAdminOutcome<never> {
    if (this.servers.isConfigured(id))
      return {
        ok: false,
        reason: 'conflict',
        message: `Virtual server "${id}" is configured (mcp.virtualServers); change it in the configuration`,
      };
    return this.applied.get(id) ?? this.notFound(id);
  }

  /** The version a change expects (undefined: any), or the refusal of an If-Match that fails. */
  private expected(
    known: StoredServer,
    ifMatch: ServerIfMatch | undefined,
  ): number | undefined | ServerAdminOutcome<never> {
    if (ifMatch === undefined || ifMatch === '*') return undefined;
    if (ifMatch.includes(known.version)) return known.version;
    return this.changed(known.server.id);
  }

  private writeRefusal(id: string, written: ServerWrite): ServerAdminOutcome<never> | undefined {
    if (written.kind === 'written') return undefined;
    if (written.kind === 'unavailable') return unavailable(written.outcomeUnknown);
    if (written.kind === 'missing') return this.notFound(id);
    return this.changed(id);
  }

  private changed(id: unknown): ServerAdminOutcome<never> {
    return {
      ok: false,
      reason: 'conflict',
      message: `Virtual server "${String(id)}" changed since it was read (If-Match); read it again`,
    };
  }

  private notFound(id: string): ServerAdminOutcome<never> {
    return { ok: false, reason: 'notFound', message: `No virtual server "${id.slice(0, 64)}"` };
  }

  private refused(check: {
    conflict: boolean;
    problems: readonly string[];
  }): ServerAdminOutcome<never> {
    return {
      ok: false,
      reason: check.conflict ? 'conflict' : 'invalid',
      message: 'The virtual server is not valid',
      problems: check.problems,
    };
  }

  private answer(id: string, status: 200 | 201): ServerAdminOutcome<RegisteredServerView> {
    const known = this.get(id);
    return known.ok ? { ...known, status } : known;
  }

  private viewOf(status: VirtualServerStatus): RegisteredServerView {
    const record = this.applied.get(status.id);
    return record === undefined
      ? status
      : {
          ...status,
          registeredAt: record.registeredAt,
          registeredBy: record.registeredBy,
          ...(record.updatedAt === undefined
            ? {}
            : { updatedAt: record.updatedAt, updatedBy: record.updatedBy }),
        };
  }
}
