import type { UpstreamProtocolSetting } from '@app/config';
import type { RegistrationStoreStatus } from '@app/registrations';
import type { FIRST_MODERN_VERSION, LATEST_LEGACY_VERSION } from '@app/wire';

/** Where an upstream comes from: the config file (read-only) or the registration API. */
export type UpstreamOrigin = 'config' | 'registered';

/**
 * docs/operations.md §15 "Routes": the life of a registration as the API and the console show it.
 */
export type RegistrationState = 'PENDING' | 'ACTIVE' | 'FAILED' | 'DISABLED';

/**
 * One upstream as `/admin/upstreams` answers it (docs/operations.md §15 "Routes"; the console
 * builds on this shape). Never a URL credential or a secret value: `authorization` names the env
 * variable. Times are ISO 8601 strings; `createdBy` is the admin who registered it ("config" for
 * configured ones).
 */
export interface AdminUpstreamView {
  readonly id: string;
  readonly url: string;
  readonly namePrefix: string;
  readonly enabled: boolean;
  readonly protocol: UpstreamProtocolSetting;
  readonly authorization: { readonly mode: string; readonly valueEnv?: string };
  /** Whether calls' arguments are checked against the tools' inputSchemas (docs/operations.md §6). */
  readonly validateArguments: boolean;
  /** Whether its tools are published only as approved (docs/operations.md §6). */
  readonly pinned: boolean;
  readonly origin: UpstreamOrigin;
  readonly state: RegistrationState;
  /** Why it is FAILED (an error type and its detail), or why an ACTIVE one serves an older copy. */
  readonly reason?: string;
  /** The MCP revision it speaks, once a pull succeeded. */
  readonly era?: typeof LATEST_LEGACY_VERSION | typeof FIRST_MODERN_VERSION;
  /** Tools of the copy in the catalog. */
  readonly toolCount?: number;
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
  readonly createdBy: string;
  /**
   * The stored record's version (registered ones only): it changes with every write, also
   * across a DELETE and a new POST of the same id; the `ETag` of GET/POST/PATCH is `"<version>"`.
   */
  readonly version?: number;
}

/** The list answer: where registrations live, and every upstream, configured ones first. */
export interface AdminUpstreamList {
  readonly storage: 'redis' | 'memory';
  readonly store: RegistrationStoreStatus;
  readonly upstreams: readonly AdminUpstreamView[];
}
