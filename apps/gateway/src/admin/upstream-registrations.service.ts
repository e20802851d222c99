import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import {
  checkRegistration,
  GATEWAY_CONFIG,
  upstreamNamePrefix,
  type GatewayConfig,
  type UpstreamConfig,
} from '@app/config';
import { RegistryService } from '@app/registry';
import { RegistrationSync, type Known, type NewRegistration } from '@app/registrations';
import type { AdminUpstreamList, AdminUpstreamView } from './admin-upstream-record';
import { AdminAuthenticator, type AdminActor } from './admin-authenticator';
import {
  audienceTaken,
  changedMeanwhile,
  configuredView,
  full,
  notFound,
  plain,
  prefixTaken,
  readOnly,
  registeredView,
  storeUnavailable,
  type AdminOutcome,
  type AdminRefusal,
} from './registration-views';

export type { AdminOutcome } from './registration-views';

/** A client's `If-Match`: any stored version (`*`), or one of these versions. */
export type IfMatch = '*' | readonly number[];

/** A PATCH with `If-Match: *` whose write lost a race to another write: read again. */
const RETRY = Symbol('retry');
/** Most reads of a PATCH with `If-Match: *` that other writes keep overtaking before a 409. */
const STAR_ATTEMPTS = 3;

/**
 * The admin API of upstream MCP servers registered at runtime (operations §15): a registration
 * is checked with the boot rules (checkRegistration) and the address guard, written to the
 * store (Redis when one is configured, else memory) in one atomic step that also takes its id,
 * its published-name prefix and its tokenExchange audience, then applied to the registry as a source: the next refresh
 * round pulls it, so its state goes PENDING → ACTIVE, or FAILED with the reason.
 *
 * The store and what this replica applied from it are RegistrationsModule's (RegistrationSync);
 * DiscoveryModule reads the store at start and again every half refresh interval
 * (RegistrationStorePuller), so every replica takes the same registrations and refuses the
 * same ones (FAILED, naming the other source). A change is a compare-and-set against the
 * version the change was based on (409 when it changed since). Changes and reads of the store
 * are serialized (RegistrationSync.exclusive). What stays here is the API's: validation,
 * views and the refusals the controller maps to HTTP.
 */
@Injectable()
export class UpstreamRegistrations implements OnApplicationBootstrap {
  private readonly logger = new Logger('Admin');
  private readonly configuredIds: ReadonlySet<string>;
  private started = false;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly registrations: RegistrationSync,
    private readonly authenticator: AdminAuthenticator,
  ) {
    this.configuredIds = new Set(config.upstreams.map((u) => u.id));
  }

  private get known() {
    return this.registrations.applied;
  }

  private get reader() {
    return this.registrations.reader;
  }

  /** Where registrations live: `redis` (shared, durable) or `memory` (this process only). */
  get storage(): 'redis' | 'memory' {
    return this.registrations.store.kind;
  }

  /**
   * Says how /admin/upstreams is reachable and how many registrations the store held: every
   * module is initialized by now, so RegistrationStorePuller has read it.
   */
  onApplicationBootstrap(): void {
    // The management application holds this same instance (useValue) and runs the hooks again.
    if (this.started) return;
    this.started = true;
    const writes =
      this.authenticator.method === 'none'
        ? 'disabled (read-only: set MCP_ADMIN_TOKEN or mcp.auth.mode jwt)'
        : `by ${this.authenticator.method}`;
    this.logger.log(
      `/admin/upstreams on the management port: writes ${writes}; registrations in ${this.storage}` +
        ` (${this.known.size} loaded)`,
    );
    // with mcp.auth jwt /admin takes JWTs with the admin scope only (operations §15 "Access")
    if (this.authenticator.method === 'jwt' && this.config.admin?.token !== undefined)
      this.logger.warn(
        'MCP_ADMIN_TOKEN is set and ignored: with mcp.auth.mode jwt, /admin takes JWTs with the admin scope (mcp.admin.scope) only',
      );
    else if (this.config.admin?.weakToken === true)
      this.logger.warn(
        'MCP_ADMIN_TOKEN has fewer than 32 characters: it opens /admin and can be guessed; use a long random one (e.g. openssl rand -base64 32)',
      );
  }

  list(): AdminUpstreamList {
    const configured = this.config.mcp.upstreams.map((u) => configuredView(this.registry, u));
    const registered = this.known.all().map((k) => registeredView(this.registry, k));
    return {
      storage: this.storage,
      store: {
        ...this.reader.status(),
      },
      upstreams: [...configured, ...registered],
    };
  }

  get(id: string): AdminOutcome<AdminUpstreamView> {
    const configured = this.config.mcp.upstreams.find((u) => u.id === id);
    if (configured !== undefined)
      return { ok: true, status: 200, body: configuredView(this.registry, configured) };
    const known = this.known.get(id);
    if (known === undefined) return notFound(id);
    return this.answer(200, known);
  }

  /** POST /admin/upstreams: checks, stores, applies; 202 with the record PENDING. */
  register(body: unknown, actor: AdminActor): Promise<AdminOutcome<AdminUpstreamView>> {
    return this.registrations.exclusive(async () => {
      const limit = this.config.mcp.admin.maxRegistrations;
      if (this.known.size >= limit) return full(this.known.size, limit);
      // the body's media type and depth were checked at the door (AdminGate.takesBody)
      const check = checkRegistration(body, this.config, this.known.valid());
      if (!check.ok)
        return {
          ok: false,
          reason: check.conflict ? 'conflict' : 'invalid',
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
      const created = await this.reader.write((g) =>
        this.registrations.store.create(registration, g, limit),
      );
      if (created.kind === 'unavailable') return storeUnavailable(created);
      switch (created.kind) {
        case 'idTaken':
          await this.reader.sync();
          return {
            ok: false,
            reason: 'conflict',
            message: `An upstream "${id}" was registered meanwhile (by another replica)`,
            problems: [`id: "${id}" duplicates a registered upstream`],
          } as const;
        case 'prefixTaken':
          // another replica took an overlapping prefix first: one winner in the store
          await this.reader.sync();
          return prefixTaken(upstreamNamePrefix(registration.upstream), created.id, created.prefix);
        case 'audienceTaken':
          // another replica took the audience first: one holder in the store
          await this.reader.sync();
          return audienceTaken(created.id);
        case 'full':
          await this.reader.sync();
          return full(limit, limit);
        case 'created':
          break;
      }
      this.reader.stored(id);
      this.known.applyAll([
        ...this.known.records(id),
        { ...registration, version: created.version },
      ]);
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
    return this.registrations.exclusive(async () => {
      if (this.configuredIds.has(id)) return readOnly(id);
      const keys = typeof body === 'object' && body !== null ? Object.keys(body) : [];
      const enabled = (body as { enabled?: unknown } | null)?.enabled;
      if (typeof enabled !== 'boolean' || keys.length !== 1)
        return {
          ok: false,
          reason: 'invalid',
          message: 'PATCH takes {"enabled": true|false} only',
          problems: [
            ...(typeof enabled === 'boolean' ? [] : ['enabled: must be true or false']),
            ...keys
              .filter((k) => k !== 'enabled')
              .map((k) => `${k}: cannot be changed; delete the upstream and register it again`),
          ],
        } as const;
      // `If-Match: *` holds for whatever is stored when it is written (RFC 9110 §13.1.1): a
      // record changed between this read and the write is read again, a few times at most
      for (let attempt = 1; ; attempt++) {
        const outcome = await this.patchOnce(id, enabled, actor, ifMatch, attempt < STAR_ATTEMPTS);
        if (outcome !== RETRY) return outcome;
      }
    });
  }

  /**
   * One compare-and-set of a PATCH.
   * @param mayRetry RETRY instead of 409 when `If-Match: *` lost a race to another write
   */
  private async patchOnce(
    id: string,
    enabled: boolean,
    actor: AdminActor,
    ifMatch: IfMatch | undefined,
    mayRetry: boolean,
  ): Promise<AdminOutcome<AdminUpstreamView> | typeof RETRY> {
    const known = await this.basedOn(id, ifMatch);
    if ('ok' in known) return known;
    const upstream = { ...known.stored.upstream, enabled };
    // Enabling counts it among the enabled sources again (a "" prefix is for a sole source).
    const check = checkRegistration(upstream, this.config, this.known.valid(id));
    if (!check.ok)
      return {
        ok: false,
        reason: check.conflict ? 'conflict' : 'invalid',
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
    const replaced = await this.reader.write((g) =>
      this.registrations.store.replace(registration, expected, g),
    );
    if (replaced.kind === 'unavailable') return storeUnavailable(replaced);
    switch (replaced.kind) {
      case 'missing':
        await this.reader.sync();
        return notFound(id);
      case 'changed':
        // read it now, so the GET the client does next shows what is stored
        await this.reader.sync();
        return ifMatch === '*' && mayRetry ? RETRY : changedMeanwhile(id, replaced.version);
      case 'replaced':
        break;
    }
    this.reader.stored(id);
    this.known.applyAll([
      ...this.known.records(id),
      { ...registration, version: replaced.version },
    ]);
    const now = this.known.get(id);
    return now === undefined ? notFound(id) : this.answer(200, now);
  }

  /**
   * DELETE /admin/upstreams/{id}: gone from the store, the registry and the catalog; with
   * `If-Match`, only if the stored record is still that version.
   */
  remove(id: string, ifMatch?: IfMatch): Promise<AdminOutcome<{ id: string; deleted: true }>> {
    return this.registrations.exclusive(async () => {
      if (this.configuredIds.has(id)) {
        // a stored registration whose id the configuration took over later (listed FAILED,
        // operations §15): its DELETE removes the stored record, freeing its prefix and its
        // place; the configured upstream of that id stays as it is, read-only
        await this.reader.sync();
        if (this.known.get(id) === undefined) return readOnly(id);
      }
      let expected: number | undefined;
      if (ifMatch !== undefined) {
        // read from the store for `*` too (basedOn), so this replica's view is the stored one
        const known = await this.basedOn(id, ifMatch);
        if ('ok' in known) return known;
        // `*`: whatever is stored when it is deleted (only a missing record fails it)
        expected = ifMatch === '*' ? undefined : known.stored.version;
      }
      const removed = await this.reader.write((g) =>
        this.registrations.store.remove(id, expected, g),
      );
      if (removed.kind === 'unavailable') return storeUnavailable(removed);
      if (removed.kind === 'changed') {
        await this.reader.sync();
        return changedMeanwhile(id, removed.version);
      }
      const wasKnown = this.known.get(id);
      if (removed.kind === 'missing' && (wasKnown === undefined || ifMatch === '*'))
        return notFound(id);
      // remembered beyond the store: a re-seed from a replica that has not read this deletion
      // yet must not bring the registration back (operations §15 "When Redis comes back empty")
      this.reader.deleted(
        id,
        removed.kind === 'removed' ? removed.version : (wasKnown?.stored.version ?? 0),
      );
      this.known.applyAll(this.known.records(id));
      return { ok: true, status: 200, body: { id, deleted: true } } as const;
    });
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
    // `*` is any version stored *now*: this replica's copy may be one deleted since
    if (!matches(known) || ifMatch === '*') {
      await this.reader.sync();
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
        this.registrations.guard.problem(upstream.url),
        typeof tokenEndpoint === 'string'
          ? this.registrations.guard.problem(tokenEndpoint, 'authorization.tokenEndpoint')
          : undefined,
      ])
    ).filter((p): p is string => p !== undefined);
    return problems.length === 0
      ? undefined
      : {
          ok: false,
          reason: 'invalid',
          message: 'The upstream URL may not be registered',
          problems,
        };
  }

  private answer(status: 200 | 202, known: Known): AdminOutcome<AdminUpstreamView> {
    return {
      ok: true,
      status,
      body: registeredView(this.registry, known),
      version: known.stored.version,
    };
  }
}
