import { FIRST_MODERN_VERSION, LATEST_LEGACY_VERSION } from '@app/wire';
import type { RegisteredUpstreamConfig, UpstreamConfig } from '@app/config';
import type { Known } from '@app/registrations';
import type { RegistryService, UpstreamPullState } from '@app/registry';
import type { AdminUpstreamView, RegistrationState } from './admin-upstream-record';

/** An answer of the registration API: the body on success, or a status and the problems. */
export type AdminOutcome<T> =
  | {
      readonly ok: true;
      readonly status: 200 | 201 | 202;
      readonly body: T;
      /** The stored record's version: the answer's `ETag`. */
      readonly version?: number;
    }
  | AdminRefusal;

/**
 * Why an admin change or read was refused; the controller maps each to its HTTP status
 * (apps/gateway/src/management/admin-upstreams.controller.ts, ADMIN_REFUSAL_STATUS).
 */
export type AdminRefusalReason =
  'invalid' | 'notFound' | 'conflict' | 'unsupportedMediaType' | 'unavailable';

export interface AdminRefusal {
  readonly ok: false;
  readonly reason: AdminRefusalReason;
  readonly message: string;
  readonly problems?: readonly string[];
}

const ERAS = { '2025': LATEST_LEGACY_VERSION, '2026': FIRST_MODERN_VERSION } as const;

/** The fields of an upstream the record shows: references only, never a secret value. */
export function fieldsOf(
  u: UpstreamConfig,
  pull: UpstreamPullState | undefined,
): Pick<
  AdminUpstreamView,
  | 'id'
  | 'url'
  | 'namePrefix'
  | 'enabled'
  | 'protocol'
  | 'authorization'
  | 'validateArguments'
  | 'pinned'
> {
  // a stored record the rules refuse is shown as stored: its defaults may be missing
  const auth = (u.authorization as UpstreamConfig['authorization'] | undefined) ?? { mode: 'none' };
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
    enabled: u.enabled !== false,
    protocol: u.protocol ?? 'auto',
    authorization: { mode: auth.mode, ...references },
    validateArguments: u.validateArguments === true,
    pinned: u.pinned === true,
  };
}

/** operations §15: PENDING until a round pulled it, ACTIVE while the catalog serves it, else FAILED. */
export function stateOf(
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

/** The upstream as plain JSON (what the store keeps). */
export function plain(upstream: UpstreamConfig): RegisteredUpstreamConfig {
  return JSON.parse(JSON.stringify(upstream)) as RegisteredUpstreamConfig;
}

export function notFound(id: string): AdminRefusal {
  return { ok: false, reason: 'notFound', message: `No upstream "${id}"` };
}

export function readOnly(id: string): AdminRefusal {
  return {
    ok: false,
    reason: 'conflict',
    message: `Upstream "${id}" is configured in the config file (origin "config") and read-only here; change it in the configuration`,
  };
}

/** 409: the stored record is not the version the change was based on. */
export function changedMeanwhile(id: string, version: number): AdminRefusal {
  return {
    ok: false,
    reason: 'conflict',
    message:
      `Upstream "${id}" was changed since it was read (it is at version ${version} now); ` +
      'GET it again and repeat the change if it still applies',
    problems: [`version: the stored record is at version ${version} (ETag "${version}")`],
  };
}

/** 409: another replica registered an upstream whose prefix overlaps this one's. */
export function prefixTaken(mine: string, id: string, theirs: string): AdminRefusal {
  const relation =
    mine === theirs
      ? `duplicates the namePrefix of registered upstream "${id}" (prefixes are unique across bundles and upstreams)`
      : mine.startsWith(theirs)
        ? `starts with the namePrefix of registered upstream "${id}" "${theirs}", so a published name could belong to both`
        : `is the start of the namePrefix of registered upstream "${id}" "${theirs}", so a published name could belong to both`;
  return {
    ok: false,
    reason: 'conflict',
    message: 'The upstream conflicts with another source',
    problems: [`namePrefix: "${mine}" ${relation}`],
  };
}

/**
 * 409: the tokenExchange audience is another registered upstream's, taken a moment before on
 * another replica (the first registration keeps it, docs/security.md "Runtime registrations").
 */
export function audienceTaken(id: string): AdminRefusal {
  return {
    ok: false,
    reason: 'conflict',
    message: 'The upstream conflicts with another source',
    problems: [
      `authorization.audience: is the audience of registered upstream "${id}": every ` +
        "caller's token for that upstream would go to this server too",
    ],
  };
}

/**
 * The store did not answer: nothing was changed, or, for a write sent and not answered in time
 * (`outcomeUnknown`), the change may still be applied when Redis wakes: the refusal says so
 * instead of promising what it cannot know.
 */
export function storeUnavailable(unavailable: {
  readonly detail: string;
  readonly outcomeUnknown: boolean;
}): AdminRefusal {
  return {
    ok: false,
    reason: 'unavailable',
    message: unavailable.outcomeUnknown
      ? `The registration store (Redis) did not answer in time; the change may still be applied when it does: read the registration back (GET /admin/upstreams) before trying again (${unavailable.detail})`
      : `The registration store (Redis) is unavailable; nothing was changed (${unavailable.detail})`,
  };
}

/**
 * Deepest nesting of arrays and objects the body of an /admin change may have (a registration's
 * fields need 3, a virtual server's 2, an approval's 2).
 */
export const MAX_BODY_DEPTH = 16;

/** Whether a parsed JSON value nests arrays or objects deeper than `limit` (iterative). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** A configured upstream as the API shows it (read-only). */
export function configuredView(registry: RegistryService, u: UpstreamConfig): AdminUpstreamView {
  return {
    ...fieldsOf(u, registry.upstreamState(u.id)),
    origin: 'config',
    ...stateOf(u.enabled, undefined, registry.upstreamState(u.id)),
    createdAt: null,
    updatedAt: null,
    createdBy: 'config',
  };
}

/** A registered upstream as this replica applied it. */
export function registeredView(registry: RegistryService, k: Known): AdminUpstreamView {
  const pull = k.invalid === undefined ? registry.upstreamState(k.upstream.id) : undefined;
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

/** 409: `admin.maxRegistrations` upstreams are registered. */
export function full(count: number, limit: number): AdminRefusal {
  return {
    ok: false,
    reason: 'conflict',
    message: `${count} upstreams are registered; mcp.admin.maxRegistrations allows ${limit}`,
    problems: [
      `id: no room for another registered upstream (mcp.admin.maxRegistrations ${limit}); delete one first`,
    ],
  };
}
