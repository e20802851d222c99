import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import {
  checkRegistration,
  GATEWAY_CONFIG,
  type GatewayConfig,
  type RegisteredUpstreamConfig,
  type UpstreamConfig,
} from '@app/config';
import { BundleRefreshService } from '@app/discovery';
import { RegistryService, type UpstreamPullState } from '@app/registry';
import { UpstreamConnections } from '@app/upstream';
import type {
  AdminUpstreamList,
  AdminUpstreamView,
  RegistrationState,
  StoredRegistration,
} from './admin-upstream-record';
import { AdminAuthenticator, type AdminActor } from './admin-authenticator';
import { REGISTRATION_STORE, UPSTREAM_ADDRESS_GUARD } from './admin-tokens';
import { RegistrationStoreUnavailableError, type RegistrationStore } from './registration-store';
import type { UpstreamAddressGuard } from './upstream-address-guard';

/** An answer of the registration API: the body on success, or a status and the problems. */
export type AdminOutcome<T> =
  | { readonly ok: true; readonly status: 200 | 202; readonly body: T }
  | {
      readonly ok: false;
      readonly status: 400 | 404 | 409 | 415 | 503;
      readonly message: string;
      readonly problems?: readonly string[];
    };

/** A registration as this replica applied it. */
interface Known {
  readonly stored: StoredRegistration;
  /** JSON of the upstream fields: a change of it re-applies the registration. */
  readonly signature: string;
  /** Why the boot rules refuse it now (e.g. a config change since it was registered). */
  readonly invalid?: string;
}

const ERAS = { '2025': '2025-11-25', '2026': '2026-07-28' } as const;

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

/**
 * Upstream MCP servers registered at runtime (issue 13 §1, §2). A registration is checked
 * with the boot rules (checkRegistration) and the address guard, stored (Redis when
 * REDIS_URL is set, else memory), then handed to the registry as a source: the next refresh
 * round pulls it (era detection, lists) and merges it under the normal rules, so its state
 * goes PENDING → ACTIVE, or FAILED with the reason (a failed pull, a name collision).
 *
 * Every replica reads the store at start (before the first round) and again every half
 * refresh interval, so a change made on one replica is applied on all within one interval
 * and a restart keeps every registration. Changes and reads of the store are serialized.
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

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly refresh: BundleRefreshService,
    private readonly connections: UpstreamConnections,
    @Inject(REGISTRATION_STORE) private readonly store: RegistrationStore,
    @Inject(UPSTREAM_ADDRESS_GUARD) private readonly guard: UpstreamAddressGuard,
    private readonly authenticator: AdminAuthenticator,
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
      let stored: StoredRegistration[];
      try {
        stored = await this.store.list();
        if (this.storeDown) this.logger.log('The registration store answers again');
        this.storeDown = false;
      } catch (err) {
        if (!this.storeDown)
          this.logger.warn(
            `Registered upstreams could not be read (${err instanceof Error ? err.message : typeof err}); keeping the ones applied`,
          );
        this.storeDown = true;
        return;
      }
      let changed = false;
      const seen = new Set<string>();
      for (const registration of stored) {
        const id = registration.upstream.id;
        seen.add(id);
        changed = this.apply(registration) || changed;
      }
      for (const id of [...this.known.keys()])
        if (!seen.has(id)) {
          this.forget(id);
          changed = true;
        }
      if (changed) this.refreshSoon();
    });
  }

  list(): AdminUpstreamList {
    const configured = this.config.mcp.upstreams.map((u) => this.configuredView(u));
    const registered = [...this.known.values()]
      .sort((a, b) => a.stored.createdAt - b.stored.createdAt)
      .map((k) => this.registeredView(k));
    return { storage: this.store.kind, upstreams: [...configured, ...registered] };
  }

  get(id: string): AdminOutcome<AdminUpstreamView> {
    const configured = this.config.mcp.upstreams.find((u) => u.id === id);
    if (configured !== undefined)
      return { ok: true, status: 200, body: this.configuredView(configured) };
    const known = this.known.get(id);
    if (known === undefined) return notFound(id);
    return { ok: true, status: 200, body: this.registeredView(known) };
  }

  /** POST /admin/upstreams: checks, stores, applies; 202 with the record PENDING. */
  register(body: unknown, actor: AdminActor): Promise<AdminOutcome<AdminUpstreamView>> {
    return this.exclusive(async () => {
      const limit = this.config.mcp.admin.maxRegistrations;
      if (this.known.size >= limit)
        return {
          ok: false,
          status: 409,
          message: `${this.known.size} upstreams are registered; mcp.admin.maxRegistrations allows ${limit}`,
          problems: [
            `id: no room for another registered upstream (mcp.admin.maxRegistrations ${limit}); delete one first`,
          ],
        } as const;
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
      // the URL, and the token endpoint the caller's token and client secret would go to
      const tokenEndpoint = check.upstream.authorization.tokenEndpoint;
      const addressProblems = (
        await Promise.all([
          this.guard.problem(check.upstream.url),
          typeof tokenEndpoint === 'string'
            ? this.guard.problem(tokenEndpoint, 'authorization.tokenEndpoint')
            : undefined,
        ])
      ).filter((p): p is string => p !== undefined);
      if (addressProblems.length > 0)
        return {
          ok: false,
          status: 400,
          message: 'The upstream URL may not be registered',
          problems: addressProblems,
        } as const;
      const now = Date.now();
      const registration: StoredRegistration = {
        // Stored as the WHATWG URL parser writes it: scheme and host lower case, default port dropped.
        upstream: plain({ ...check.upstream, url: new URL(check.upstream.url).href }),
        createdAt: now,
        updatedAt: now,
        createdBy: actor.name,
        updatedBy: actor.name,
      };
      const created = await this.write(() => this.store.create(registration));
      if (typeof created !== 'boolean') return created;
      if (!created)
        return {
          ok: false,
          status: 409,
          message: `An upstream "${check.upstream.id}" was registered meanwhile (by another replica)`,
          problems: [`id: "${check.upstream.id}" duplicates a registered upstream`],
        } as const;
      this.apply(registration);
      this.refreshSoon();
      const known = this.known.get(check.upstream.id);
      return known === undefined
        ? notFound(check.upstream.id)
        : ({ ok: true, status: 202, body: this.registeredView(known) } as const);
    });
  }

  /** PATCH /admin/upstreams/{id}: `{enabled}` only. */
  update(id: string, body: unknown, actor: AdminActor): Promise<AdminOutcome<AdminUpstreamView>> {
    return this.exclusive(async () => {
      if (this.configuredIds.has(id)) return readOnly(id);
      const known = this.known.get(id);
      if (known === undefined) return notFound(id);
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
      const registration: StoredRegistration = {
        upstream: plain(check.upstream),
        createdAt: known.stored.createdAt,
        updatedAt: Math.max(Date.now(), known.stored.updatedAt + 1),
        createdBy: known.stored.createdBy,
        updatedBy: actor.name,
      };
      const replaced = await this.write(() => this.store.replace(registration));
      if (typeof replaced !== 'boolean') return replaced;
      if (!replaced) {
        this.forget(id);
        return notFound(id);
      }
      this.apply(registration);
      this.refreshSoon();
      const now = this.known.get(id);
      return now === undefined
        ? notFound(id)
        : ({ ok: true, status: 200, body: this.registeredView(now) } as const);
    });
  }

  /** DELETE /admin/upstreams/{id}: gone from the store, the registry and the catalog. */
  remove(id: string): Promise<AdminOutcome<{ id: string; deleted: true }>> {
    return this.exclusive(async () => {
      if (this.configuredIds.has(id)) return readOnly(id);
      const removed = await this.write(() => this.store.remove(id));
      if (typeof removed !== 'boolean') return removed;
      const wasKnown = this.known.has(id);
      if (!removed && !wasKnown) return notFound(id);
      this.forget(id);
      this.refreshSoon();
      return { ok: true, status: 200, body: { id, deleted: true } } as const;
    });
  }

  /** Applies one registration; true when the registry's sources changed. */
  private apply(registration: StoredRegistration): boolean {
    const id = registration.upstream.id;
    const previous = this.known.get(id);
    // createdAt too: a registration deleted and posted again with the same content is a new
    // one, placed after those registered before it (the order sources claim resource URIs)
    const signature = JSON.stringify([registration.createdAt, registration.upstream]);
    if (previous !== undefined && previous.signature === signature) {
      this.known.set(id, { ...previous, stored: registration });
      return false;
    }
    if (this.configuredIds.has(id)) {
      this.known.set(id, {
        stored: registration,
        signature,
        invalid: `id: "${id}" is now a configured upstream`,
      });
      return false;
    }
    const check = checkRegistration(registration.upstream, this.config, this.validRegistered(id));
    if (previous !== undefined) void this.connections.release(id);
    if (!check.ok) {
      this.registry.removeUpstream(id);
      this.known.set(id, { stored: registration, signature, invalid: check.problems.join('; ') });
      this.logger.warn(`Registered upstream ${id} is not applied: ${check.problems.join('; ')}`);
      return previous !== undefined && previous.invalid === undefined;
    }
    // registration time orders the registered sources alike on every replica (resource URIs)
    this.registry.putUpstream(check.definition, registration.createdAt);
    this.known.set(id, { stored: { ...registration, upstream: check.upstream }, signature });
    return true;
  }

  private forget(id: string): void {
    this.known.delete(id);
    this.registry.removeUpstream(id);
    void this.connections.release(id);
  }

  /** A refresh round that starts after now (the contract §8 one: throttled, never dropped). */
  private refreshSoon(): void {
    void this.refresh.refreshForUnknownTool();
  }

  private validRegistered(exceptId?: string): RegisteredUpstreamConfig[] {
    return [...this.known.values()]
      .filter((k) => k.invalid === undefined && k.stored.upstream.id !== exceptId)
      .map((k) => k.stored.upstream);
  }

  private async write(
    command: () => Promise<boolean>,
  ): Promise<boolean | Extract<AdminOutcome<never>, { ok: false }>> {
    try {
      return await command();
    } catch (err) {
      if (!(err instanceof RegistrationStoreUnavailableError)) throw err;
      return {
        ok: false,
        status: 503,
        message: `The registration store (Redis) is unavailable; nothing was changed (${err.message})`,
      };
    }
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
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
    const u = k.stored.upstream;
    const pull = k.invalid === undefined ? this.registry.upstreamState(u.id) : undefined;
    return {
      ...fieldsOf(u, pull),
      origin: 'registered',
      ...stateOf(u.enabled, k.invalid, pull),
      createdAt: new Date(k.stored.createdAt).toISOString(),
      updatedAt: new Date(k.stored.updatedAt).toISOString(),
      createdBy: k.stored.createdBy,
    };
  }
}

function fieldsOf(
  u: UpstreamConfig,
  pull: UpstreamPullState | undefined,
): Pick<AdminUpstreamView, 'id' | 'url' | 'namePrefix' | 'enabled' | 'protocol' | 'authorization'> {
  const auth = u.authorization;
  // references only (env names, endpoint, client id): a secret value is never stored
  const references = Object.fromEntries(
    (['valueEnv', 'tokenEndpoint', 'clientId', 'clientSecretEnv', 'audience', 'scope'] as const)
      .filter((key) => typeof auth[key] === 'string')
      .map((key) => [key, auth[key] as string]),
  );
  return {
    id: u.id,
    url: u.url,
    namePrefix:
      pull?.definition.namePrefix ?? u.namePrefix ?? `${u.id.replace(/[^A-Za-z0-9_-]/g, '_')}__`,
    enabled: u.enabled,
    protocol: u.protocol,
    authorization: { mode: auth.mode, ...references },
  };
}

/** issue 13 §1: PENDING until a round pulled it, ACTIVE while the catalog serves it, else FAILED. */
function stateOf(
  enabled: boolean,
  invalid: string | undefined,
  pull: UpstreamPullState | undefined,
): Pick<AdminUpstreamView, 'state' | 'reason' | 'era' | 'toolCount'> {
  const served = {
    ...(pull?.era === undefined ? {} : { era: ERAS[pull.era] }),
    ...(pull?.toolCount === undefined ? {} : { toolCount: pull.toolCount }),
  };
  const reason =
    pull?.lastErrorType === undefined
      ? undefined
      : `${pull.lastErrorType}${pull.lastErrorDetail === undefined ? '' : `: ${pull.lastErrorDetail}`}`;
  let state: RegistrationState;
  if (invalid !== undefined) return { state: 'FAILED', reason: invalid };
  if (!enabled) state = 'DISABLED';
  else if (pull === undefined || !pull.attempted) state = 'PENDING';
  else if (pull.status === 'healthy' || pull.status === 'degraded') state = 'ACTIVE';
  else state = pull.lastErrorType === undefined ? 'PENDING' : 'FAILED';
  return { state, ...(reason === undefined || state === 'DISABLED' ? {} : { reason }), ...served };
}

function plain(upstream: UpstreamConfig): RegisteredUpstreamConfig {
  return JSON.parse(JSON.stringify(upstream)) as RegisteredUpstreamConfig;
}

function notFound(id: string): Extract<AdminOutcome<never>, { ok: false }> {
  return { ok: false, status: 404, message: `No upstream "${id}"` };
}

function readOnly(id: string): Extract<AdminOutcome<never>, { ok: false }> {
  return {
    ok: false,
    status: 409,
    message: `Upstream "${id}" is configured in the config file (origin "config") and read-only here; change it in the configuration`,
  };
}
