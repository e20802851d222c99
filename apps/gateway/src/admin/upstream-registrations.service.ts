import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import {
  checkRegistration,
  GATEWAY_CONFIG,
  upstreamNamePrefix,
  type GatewayConfig,
  type RegisteredUpstreamConfig,
  type UpstreamConfig,
} from '@app/config';
import { BundleRefreshService } from '@app/discovery';
import { GatewayMetrics } from '@app/observability';
import { RegistryService } from '@app/registry';
import { UpstreamConnections } from '@app/upstream';
import type {
  AdminUpstreamList,
  AdminUpstreamView,
  RegistrationStoreStatus,
  StoredRegistration,
} from './admin-upstream-record';
import { AdminAuthenticator, type AdminActor } from './admin-authenticator';
import { REGISTRATION_STORE, UPSTREAM_ADDRESS_GUARD } from './admin-tokens';
import {
  RegistrationStoreUnavailableError,
  type NewRegistration,
  type RegistrationStore,
  type StoreSnapshot,
} from './registration-store';
import {
  changedMeanwhile,
  fieldsOf,
  notFound,
  plain,
  prefixTaken,
  readOnly,
  stateOf,
  storeUnavailable,
  type AdminOutcome,
  type AdminRefusal,
} from './registration-views';
import type { UpstreamAddressGuard } from './upstream-address-guard';

export type { AdminOutcome } from './registration-views';

/** A client's `If-Match`: any stored version (`*`), or one of these versions. */
export type IfMatch = '*' | readonly number[];

/** A registration as this replica applied it. */
interface Known {
  /** The record as the store holds it (what a re-seed writes back). */
  readonly stored: StoredRegistration;
  /** The upstream as the boot rules read it (defaults filled in); the stored one when invalid. */
  readonly upstream: RegisteredUpstreamConfig;
  /** JSON of the stored upstream fields: a change of it re-applies the registration. */
  readonly signature: string;
  /** Why the boot rules refuse it now (a config change, a source registered before it). */
  readonly invalid?: string;
  /** Why the address guard refused this stored upstream when it was read (per signature). */
  readonly addressRefusal?: string;
}

/** Deepest nesting of arrays and objects a registration body may have (its fields need 3). */
const MAX_BODY_DEPTH = 16;

/** Whether a parsed JSON value nests arrays or objects deeper than `limit` (iterative). */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The order every replica applies registrations in: oldest first, then by id. */
function byAge(a: StoredRegistration, b: StoredRegistration): number {
  const x = a.upstream.id;
  const y = b.upstream.id;
  return a.createdAt - b.createdAt || (x < y ? -1 : x > y ? 1 : 0);
}

/**
 * Upstream MCP servers registered at runtime (operations §15). A registration is checked
 * with the boot rules (checkRegistration) and the address guard, written to the store
 * (Redis when REDIS_URL is set, else memory) in one atomic step that also takes its id and its
 * published-name prefix, then handed to the registry as a source: the next refresh round pulls
 * it, so its state goes PENDING → ACTIVE, or FAILED with the reason.
 *
 * Every replica reads the store at start and again every half refresh interval, and applies
 * what it holds in one order (oldest first, then id) with the boot rules, so every replica
 * takes the same registrations and refuses the same ones (FAILED, naming the other source).
 * A change is a compare-and-set against the version the change was based on (409 when it
 * changed since). A store that lost its data (no generation marker, or another one) is
 * re-seeded from what this replica applied, which it keeps serving. Changes and reads of
 * the store are serialized.
 */
@Injectable()
export class UpstreamRegistrations implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Admin');
  private readonly known = new Map<string, Known>();
  private readonly configuredIds: ReadonlySet<string>;
  private queue: Promise<unknown> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private storeDown = false;
  private started = false;
  private closed = false;
  /** The store's generation marker as last read; undefined until a read succeeded. */
  private generation?: string;
  /** The set of records last applied (versions and fields), to skip an unchanged read. */
  private appliedSignature?: string;
  private resets = 0;
  private lastReset?: RegistrationStoreStatus['lastReset'];

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly refresh: BundleRefreshService,
    private readonly connections: UpstreamConnections,
    @Inject(REGISTRATION_STORE) private readonly store: RegistrationStore,
    @Inject(UPSTREAM_ADDRESS_GUARD) private readonly guard: UpstreamAddressGuard,
    private readonly authenticator: AdminAuthenticator,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.configuredIds = new Set(config.upstreams.map((u) => u.id));
  }

  /** Where registrations live: `redis` (shared, durable) or `memory` (this process only). */
  get storage(): 'redis' | 'memory' {
    return this.store.kind;
  }

  /** Loads the stored registrations before the first refresh round, then polls the store. */
  async onModuleInit(): Promise<void> {
    // The management application holds this same instance (useValue) and runs the hooks again.
    if (this.started) return;
    this.started = true;
    await this.sync();
    const writes =
      this.authenticator.method === 'none'
        ? 'disabled (read-only: set MCP_ADMIN_TOKEN or mcp.auth.mode jwt)'
        : `by ${this.authenticator.method}`;
    this.logger.log(
      `/admin/upstreams on the management port: writes ${writes}; registrations in ${this.store.kind}` +
        ` (${this.known.size} loaded)`,
    );
    const intervalMs = Math.min(
      30_000,
      Math.max(500, (this.config.mcp.registry.refreshIntervalSeconds * 1000) / 2),
    );
    this.timer = setInterval(() => void this.sync(), intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.store.close();
  }

  /** Applies the store's registrations: new and changed ones put, vanished ones removed. */
  sync(): Promise<void> {
    return this.exclusive(async () => {
      await this.syncNow();
    });
  }

  list(): AdminUpstreamList {
    const configured = this.config.mcp.upstreams.map((u) => this.configuredView(u));
    const registered = [...this.known.values()]
      .sort((a, b) => byAge(a.stored, b.stored))
      .map((k) => this.registeredView(k));
    return {
      storage: this.store.kind,
      store: {
        available: !this.storeDown,
        resets: this.resets,
        ...(this.lastReset === undefined ? {} : { lastReset: this.lastReset }),
      },
      upstreams: [...configured, ...registered],
    };
  }

  get(id: string): AdminOutcome<AdminUpstreamView> {
    const configured = this.config.mcp.upstreams.find((u) => u.id === id);
    if (configured !== undefined)
      return { ok: true, status: 200, body: this.configuredView(configured) };
    const known = this.known.get(id);
    if (known === undefined) return notFound(id);
    return this.answer(200, known);
  }

  /** POST /admin/upstreams: checks, stores, applies; 202 with the record PENDING. */
  register(body: unknown, actor: AdminActor): Promise<AdminOutcome<AdminUpstreamView>> {
    return this.exclusive(async () => {
      const limit = this.config.mcp.admin.maxRegistrations;
      if (this.known.size >= limit) return full(this.known.size, limit);
      if (nestedDeeperThan(body, MAX_BODY_DEPTH))
        return {
          ok: false,
          status: 400,
          message: 'The upstream is not valid',
          problems: [`the body is nested deeper than ${MAX_BODY_DEPTH} levels`],
        } as const;
      const check = checkRegistration(body, this.config, this.validRegistered());
      if (!check.ok)
        return {
          ok: false,
          status: check.conflict ? 409 : 400,
          message: check.conflict
            ? 'The upstream conflicts with another source'
            : 'The upstream is not valid',
          problems: check.problems,
        } as const;
      const refused = await this.addressRefusal(check.upstream);
      if (refused !== undefined) return refused;
      const id = check.upstream.id;
      const now = Date.now();
      const registration: NewRegistration = {
        // Stored as the WHATWG URL parser writes it: scheme and host lower case, default port dropped.
        upstream: plain({ ...check.upstream, url: new URL(check.upstream.url).href }),
        createdAt: now,
        updatedAt: now,
        createdBy: actor.name,
        updatedBy: actor.name,
      };
      const created = await this.write((g) => this.store.create(registration, g, limit));
      if ('ok' in created) return created;
      switch (created.kind) {
        case 'idTaken':
          await this.syncNow();
          return {
            ok: false,
            status: 409,
            message: `An upstream "${id}" was registered meanwhile (by another replica)`,
            problems: [`id: "${id}" duplicates a registered upstream`],
          } as const;
        case 'prefixTaken':
          // another replica took an overlapping prefix first: one winner in the store
          await this.syncNow();
          return prefixTaken(upstreamNamePrefix(registration.upstream), created.id, created.prefix);
        case 'full':
          await this.syncNow();
          return full(limit, limit);
        case 'created':
          break;
      }
      this.applyAll([...this.storedRecords(id), { ...registration, version: created.version }]);
      const known = this.known.get(id);
      return known === undefined ? notFound(id) : this.answer(202, known);
    });
  }

  /**
   * PATCH /admin/upstreams/{id}: `{enabled}` only, a compare-and-set against the version this
   * replica read (or the `If-Match` one): 409 when the stored record changed since.
   */
  update(
    id: string,
    body: unknown,
    actor: AdminActor,
    ifMatch?: IfMatch,
  ): Promise<AdminOutcome<AdminUpstreamView>> {
    return this.exclusive(async () => {
      if (this.configuredIds.has(id)) return readOnly(id);
      const keys = typeof body === 'object' && body !== null ? Object.keys(body) : [];
      const enabled = (body as { enabled?: unknown } | null)?.enabled;
      if (typeof enabled !== 'boolean' || keys.length !== 1)
        return {
          ok: false,
          status: 400,
          message: 'PATCH takes {"enabled": true|false} only',
          problems: [
            ...(typeof enabled === 'boolean' ? [] : ['enabled: must be true or false']),
            ...keys
              .filter((k) => k !== 'enabled')
              .map((k) => `${k}: cannot be changed; delete the upstream and register it again`),
          ],
        } as const;
      const known = await this.basedOn(id, ifMatch);
      if ('ok' in known) return known;
      const upstream = { ...known.stored.upstream, enabled };
      // Enabling counts it among the enabled sources again (a "" prefix is for a sole source).
      const check = checkRegistration(upstream, this.config, this.validRegistered(id));
      if (!check.ok)
        return {
          ok: false,
          status: check.conflict ? 409 : 400,
          message: 'The upstream cannot be changed so',
          problems: check.problems,
        } as const;
      // every write is checked as a registration is: the address may resolve elsewhere now
      const refused = await this.addressRefusal(check.upstream);
      if (refused !== undefined) return refused;
      const registration: NewRegistration = {
        upstream: plain(check.upstream),
        createdAt: known.stored.createdAt,
        updatedAt: Math.max(Date.now(), known.stored.updatedAt + 1),
        createdBy: known.stored.createdBy,
        updatedBy: actor.name,
      };
      const expected = known.stored.version;
      const replaced = await this.write((g) => this.store.replace(registration, expected, g));
      if ('ok' in replaced) return replaced;
      switch (replaced.kind) {
        case 'missing':
          await this.syncNow();
          return notFound(id);
        case 'changed':
          // read it now, so the GET the client does next shows what is stored
          await this.syncNow();
          return changedMeanwhile(id, replaced.version);
        case 'replaced':
          break;
      }
      this.applyAll([...this.storedRecords(id), { ...registration, version: replaced.version }]);
      const now = this.known.get(id);
      return now === undefined ? notFound(id) : this.answer(200, now);
    });
  }

  /**
   * DELETE /admin/upstreams/{id}: gone from the store, the registry and the catalog; with
   * `If-Match`, only if the stored record is still that version.
   */
  remove(id: string, ifMatch?: IfMatch): Promise<AdminOutcome<{ id: string; deleted: true }>> {
    return this.exclusive(async () => {
      if (this.configuredIds.has(id)) return readOnly(id);
      let expected: number | undefined;
      if (ifMatch !== undefined) {
        const known = await this.basedOn(id, ifMatch);
        if ('ok' in known) return known;
        expected = known.stored.version;
      }
      const removed = await this.write((g) => this.store.remove(id, expected, g));
      if ('ok' in removed) return removed;
      if (removed.kind === 'changed') {
        await this.syncNow();
        return changedMeanwhile(id, removed.version);
      }
      const wasKnown = this.known.has(id);
      if (removed.kind === 'missing' && !wasKnown) return notFound(id);
      this.applyAll(this.storedRecords(id));
      return { ok: true, status: 200, body: { id, deleted: true } } as const;
    });
  }

  /**
   * Reads the store and applies it; false when it could not be read (what was applied stays).
   * A store without this replica's generation marker lost its data: it is re-seeded first.
   */
  private async syncNow(): Promise<boolean> {
    let snapshot: StoreSnapshot;
    try {
      snapshot = await this.store.read();
      if (
        snapshot.generation === undefined ||
        (this.generation !== undefined && snapshot.generation !== this.generation)
      )
        snapshot = await this.reseed(snapshot);
      else this.generation = snapshot.generation;
      if (this.storeDown) this.logger.log('The registration store answers again');
      this.storeDown = false;
    } catch (err) {
      if (!this.storeDown)
        this.logger.warn(
          `Registered upstreams could not be read (${err instanceof Error ? err.message : typeof err}); keeping the ones applied`,
        );
      this.storeDown = true;
      return false;
    }
    this.applyAll(snapshot.registrations, await this.guardChanged(snapshot.registrations));
    return true;
  }

  /**
   * The address guard over every stored record that is new or changed since this replica read
   * it (a record another replica wrote, or one written around the API): a refused address is
   * never applied. A host that does not resolve now passes (its pulls fail on their own).
   */
  private async guardChanged(
    registrations: readonly StoredRegistration[],
  ): Promise<ReadonlyMap<string, string | undefined>> {
    const out = new Map<string, string | undefined>();
    await Promise.all(
      registrations.map(async (r) => {
        const id = r.upstream.id;
        const previous = this.known.get(id);
        if (previous !== undefined && previous.signature === JSON.stringify(r.upstream)) {
          out.set(id, previous.addressRefusal);
          return;
        }
        const url = typeof r.upstream.url === 'string' ? r.upstream.url : '';
        const endpoint = (r.upstream.authorization as { tokenEndpoint?: unknown } | undefined)
          ?.tokenEndpoint;
        const options = { unresolvedPasses: true };
        const problems = await Promise.all([
          this.guard.problem(url, 'url', options),
          typeof endpoint === 'string'
            ? this.guard.problem(endpoint, 'authorization.tokenEndpoint', options)
            : undefined,
        ]);
        out.set(id, problems.filter((p) => p !== undefined).join('; ') || undefined);
      }),
    );
    return out;
  }

  /**
   * The store has no marker (never used, or reset: Redis restarted without its data, was
   * flushed, failed over to an empty replica) or another one (re-seeded by another replica
   * after a reset). A replica that had read it writes back every registration it applied
   * (ids the store lacks); the registrations stay served throughout.
   */
  private async reseed(found: StoreSnapshot): Promise<StoreSnapshot> {
    const previous = this.generation;
    const records = previous === undefined ? [] : [...this.known.values()].map((k) => k.stored);
    const seeded = await this.store.seed(previous, records);
    this.generation = seeded.generation;
    if (previous !== undefined) {
      this.resets += 1;
      this.lastReset = { detectedAt: new Date().toISOString(), restored: seeded.written };
      this.metrics?.registrationStoreReset();
      this.logger.warn(
        `The registration store was reset (${found.generation === undefined ? 'its generation marker is gone: Redis restarted without its data, was flushed or failed over to an empty replica' : 'another replica re-seeded it after a reset'}); ` +
          `the ${records.length} registrations applied here stay served, ${seeded.written} written back`,
      );
    }
    return seeded.generation === found.generation && seeded.written === 0
      ? found
      : await this.store.read();
  }

  /**
   * Applies the registrations of the store, in the order every replica uses: each one is
   * checked against the configuration and the ones before it, so an overlap (two replicas'
   * registrations, or one re-seeded after a reset) fails the later one everywhere.
   */
  private applyAll(
    registrations: readonly StoredRegistration[],
    refusals: ReadonlyMap<string, string | undefined> = new Map(),
  ): void {
    const ordered = [...registrations].sort(byAge);
    const signature = JSON.stringify(ordered.map((r) => [r.version, r.upstream]));
    if (signature === this.appliedSignature) return;
    const accepted: RegisteredUpstreamConfig[] = [];
    const seen = new Set<string>();
    let changed = false;
    for (const registration of ordered) {
      seen.add(registration.upstream.id);
      const id = registration.upstream.id;
      // a record this replica wrote was guarded by the write; one read keeps its refusal
      const refusal = refusals.has(id) ? refusals.get(id) : this.known.get(id)?.addressRefusal;
      changed = this.applyOne(registration, accepted, refusal) || changed;
    }
    for (const id of [...this.known.keys()])
      if (!seen.has(id)) {
        this.forget(id);
        changed = true;
      }
    this.appliedSignature = signature;
    if (changed) this.refreshSoon();
  }

  /** Applies one registration after `accepted` (pushed to when valid); true when the registry changed. */
  private applyOne(
    registration: StoredRegistration,
    accepted: RegisteredUpstreamConfig[],
    addressRefusal: string | undefined,
  ): boolean {
    const id = registration.upstream.id;
    const previous = this.known.get(id);
    const signature = JSON.stringify(registration.upstream);
    if (this.configuredIds.has(id)) {
      const invalid = `id: "${id}" is now a configured upstream`;
      this.known.set(id, {
        stored: registration,
        upstream: registration.upstream,
        signature,
        invalid,
      });
      return false;
    }
    const check = checkRegistration(registration.upstream, this.config, accepted);
    const invalid = check.ok ? addressRefusal : check.problems.join('; ');
    if (check.ok && addressRefusal === undefined) accepted.push(check.upstream);
    if (
      previous !== undefined &&
      previous.signature === signature &&
      previous.invalid === invalid
    ) {
      this.known.set(id, { ...previous, stored: registration });
      return false;
    }
    if (previous !== undefined) void this.connections.release(id);
    if (!check.ok || invalid !== undefined) {
      this.registry.removeUpstream(id);
      this.known.set(id, {
        stored: registration,
        upstream: registration.upstream,
        signature,
        invalid,
        addressRefusal,
      });
      this.logger.warn(`Registered upstream ${id} is not applied: ${invalid}`);
      return previous !== undefined && previous.invalid === undefined;
    }
    this.registry.putUpstream(check.definition);
    this.known.set(id, { stored: registration, upstream: check.upstream, signature });
    return true;
  }

  private forget(id: string): void {
    this.known.delete(id);
    this.registry.removeUpstream(id);
    void this.connections.release(id);
  }

  /** The stored records this replica applied, but `exceptId`'s. */
  private storedRecords(exceptId: string): StoredRegistration[] {
    return [...this.known.values()]
      .filter((k) => k.stored.upstream.id !== exceptId)
      .map((k) => k.stored);
  }

  /**
   * The record a PATCH or conditional DELETE is based on: this replica's copy, read again
   * when it does not know the id or the client's If-Match names another version.
   */
  private async basedOn(id: string, ifMatch: IfMatch | undefined): Promise<Known | AdminRefusal> {
    const matches = (k: Known | undefined): boolean =>
      k !== undefined &&
      (ifMatch === undefined || ifMatch === '*' || ifMatch.includes(k.stored.version));
    let known = this.known.get(id);
    if (!matches(known)) {
      await this.syncNow();
      known = this.known.get(id);
    }
    if (known === undefined) return notFound(id);
    if (!matches(known)) return changedMeanwhile(id, known.stored.version);
    return known;
  }

  /** The address guard over the URL and the token endpoint a caller's token would go to. */
  private async addressRefusal(upstream: UpstreamConfig): Promise<AdminRefusal | undefined> {
    const tokenEndpoint = upstream.authorization.tokenEndpoint;
    const problems = (
      await Promise.all([
        this.guard.problem(upstream.url),
        typeof tokenEndpoint === 'string'
          ? this.guard.problem(tokenEndpoint, 'authorization.tokenEndpoint')
          : undefined,
      ])
    ).filter((p): p is string => p !== undefined);
    return problems.length === 0
      ? undefined
      : { ok: false, status: 400, message: 'The upstream URL may not be registered', problems };
  }

  /** A refresh round that starts after now (the contract §8 one: throttled, never dropped). */
  private refreshSoon(): void {
    void this.refresh.refreshForUnknownTool();
  }

  private validRegistered(exceptId?: string): RegisteredUpstreamConfig[] {
    return [...this.known.values()]
      .filter((k) => k.invalid === undefined && k.stored.upstream.id !== exceptId)
      .map((k) => k.upstream);
  }

  /**
   * Runs one store write under the generation this replica read. A store that was reset or
   * re-seeded since answers `generation`: it is read (and re-seeded) and the write tried once
   * more. Redis not answering is a 503: nothing was changed.
   */
  private async write<R extends { readonly kind: string }>(
    command: (generation: string) => Promise<R>,
  ): Promise<Exclude<R, { readonly kind: 'generation' }> | AdminRefusal> {
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (attempt > 0 || this.generation === undefined) await this.syncNow();
        if (this.generation === undefined) return storeUnavailable('it could not be read');
        const result = await command(this.generation);
        if (result.kind !== 'generation') return result as Exclude<R, { kind: 'generation' }>;
      }
      return storeUnavailable('it was reset while the change was written; try again');
    } catch (err) {
      if (!(err instanceof RegistrationStoreUnavailableError)) throw err;
      return storeUnavailable(err.message);
    }
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private answer(status: 200 | 202, known: Known): AdminOutcome<AdminUpstreamView> {
    return { ok: true, status, body: this.registeredView(known), version: known.stored.version };
  }

  private configuredView(u: UpstreamConfig): AdminUpstreamView {
    return {
      ...fieldsOf(u, this.registry.upstreamState(u.id)),
      origin: 'config',
      ...stateOf(u.enabled, undefined, this.registry.upstreamState(u.id)),
      createdAt: null,
      updatedAt: null,
      createdBy: 'config',
    };
  }

  private registeredView(k: Known): AdminUpstreamView {
    const pull = k.invalid === undefined ? this.registry.upstreamState(k.upstream.id) : undefined;
    return {
      ...fieldsOf(k.upstream, pull),
      origin: 'registered',
      ...stateOf(k.upstream.enabled !== false, k.invalid, pull),
      createdAt: new Date(k.stored.createdAt).toISOString(),
      updatedAt: new Date(k.stored.updatedAt).toISOString(),
      createdBy: k.stored.createdBy,
      version: k.stored.version,
    };
  }
}

function full(count: number, limit: number): AdminRefusal {
  return {
    ok: false,
    status: 409,
    message: `${count} upstreams are registered; mcp.admin.maxRegistrations allows ${limit}`,
    problems: [
      `id: no room for another registered upstream (mcp.admin.maxRegistrations ${limit}); delete one first`,
    ],
  };
}
