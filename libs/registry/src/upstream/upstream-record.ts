import type { UpstreamDefinition } from '@app/config';
import type { ResourceConflict } from '../catalog/catalog-extras';
import type { ViewConflict } from '../catalog/own-views';
import type { LeftOutItem, UpstreamContribution } from './upstream-contribution';
import type { UpstreamLists, UpstreamPullErrorType } from './upstream-pull-result';

/** How many resource conflicts an upstream's status shows (each new one is also logged). */
export const RESOURCE_CONFLICTS_SHOWN = 50;

/**
 * The status of docs/operations.md §10 "GET /actuator/upstreams": `healthy` (the last pull was
 * adopted), `degraded` (serving a last good copy after a failed pull), `unreachable` (never
 * answered: nothing to serve), `disabled`.
 */
export type UpstreamStatus = 'healthy' | 'degraded' | 'unreachable' | 'disabled';

/** Where the served copy came from: pulled by this replica, or read from Redis at warm start. */
export type UpstreamCopySource = 'remote' | 'redis';

/** What /actuator/upstreams shows for one upstream: never a URL, header or token. */
export interface UpstreamStatusView {
  readonly id: string;
  /** Configured in mcp.upstreams[] (read-only at runtime) or registered through /admin/upstreams. */
  readonly origin: 'config' | 'registered';
  readonly status: UpstreamStatus;
  /** The MCP era the upstream speaks ("2025" sessions, "2026" stateless); null before it answered. */
  readonly era: '2025' | '2026' | null;
  readonly namePrefix: string;
  /** Published items of the served copy, per list. */
  readonly counts: {
    readonly tools: number;
    readonly resources: number;
    readonly resourceTemplates: number;
    readonly prompts: number;
  };
  /** Items the upstream listed that are not published, with the gateway's reason. */
  readonly leftOut: readonly LeftOutItem[];
  /**
   * Resource URIs it lists that an earlier source keeps (docs/operations.md §10 "Routing"):
   * `keptBy` lists it too, or serves it by its `template`; the first RESOURCE_CONFLICTS_SHOWN of them.
   */
  readonly resourceConflicts: readonly {
    readonly uri: string;
    readonly keptBy: string;
    readonly template: string | null;
  }[];
  /**
   * Its tools not published because their MCP Apps view (`_meta.ui.resourceUri`) is a resource
   * another source serves (docs/operations.md §10 "Extensions"); the first RESOURCE_CONFLICTS_SHOWN.
   */
  readonly viewConflicts: readonly {
    readonly tool: string;
    readonly resourceUri: string;
    readonly servedBy: string;
  }[];
  readonly lastAttemptAt: string | null;
  readonly lastSuccessAt: string | null;
  readonly consecutiveFailures: number;
  /** An error type name such as UpstreamTimeoutError; never a message. */
  readonly lastErrorType: UpstreamPullErrorType | null;
  readonly source: UpstreamCopySource | null;
  /** Age of the served copy in whole seconds; null while there is none. */
  readonly ageSeconds: number | null;
}

/** The last good lists of an upstream. */
export interface UpstreamCopy {
  readonly contribution: UpstreamContribution;
  /** The lists as pulled: what the shared store keeps (checked again when read back). */
  readonly lists: UpstreamLists;
  readonly source: UpstreamCopySource;
  readonly fetchedAt: Date;
}

/** Mutable pull state of one configured upstream; owned by UpstreamIntake alone. */
export class UpstreamRecord {
  lastGood?: UpstreamCopy;
  lastSuccessAt?: Date;
  lastAttemptAt?: Date;
  lastAttemptOk?: boolean;
  consecutiveFailures = 0;
  lastErrorType?: UpstreamPullErrorType;
  /** ms since the epoch at which a runtime registration put this record (0: configured). */
  putAt = 0;
  /** ms since the epoch of the registration (its createdAt; 0: configured): its place among registered sources. */
  registeredAt = 0;
  /** The last failure's detail (or merge rejection's), for operators; never on /actuator. */
  lastErrorDetail?: string;
  /** URIs it lists that an earlier source keeps, as of the last published catalog. */
  resourceConflicts: readonly ResourceConflict[] = [];
  /** Its tools left out of the last published catalog for their views (catalog/own-views.ts). */
  viewConflicts: readonly ViewConflict[] = [];

  constructor(readonly definition: UpstreamDefinition) {}

  get status(): UpstreamStatus {
    if (!this.definition.enabled) return 'disabled';
    if (this.lastGood === undefined) return 'unreachable';
    return this.lastAttemptOk === true && this.lastGood.source === 'remote'
      ? 'healthy'
      : 'degraded';
  }

  /** Records an adopted pull; returns how many failed pulls it ends. */
  recordSuccess(at: Date): number {
    const ended = this.consecutiveFailures;
    this.lastSuccessAt = at;
    this.lastAttemptOk = true;
    this.consecutiveFailures = 0;
    this.lastErrorType = undefined;
    this.lastErrorDetail = undefined;
    return ended;
  }

  recordFailure(errorType: UpstreamPullErrorType): void {
    this.lastAttemptOk = false;
    this.consecutiveFailures += 1;
    this.lastErrorType = errorType;
  }

  view(now: Date, origin: UpstreamStatusView['origin']): UpstreamStatusView {
    const c = this.lastGood?.contribution;
    return {
      id: this.definition.id,
      origin,
      status: this.status,
      era: c?.era ?? null,
      namePrefix: this.definition.namePrefix,
      // published: a tool whose view another source serves, or a resource URI an earlier source
      // keeps, is listed by the upstream but not served (its conflicts below)
      counts: {
        tools: Math.max(
          0,
          (c?.tools.length ?? 0) - new Set(this.viewConflicts.map((v) => v.tool)).size,
        ),
        resources: Math.max(
          0,
          (c?.resources.length ?? 0) - new Set(this.resourceConflicts.map((r) => r.uri)).size,
        ),
        resourceTemplates: c?.resourceTemplates.length ?? 0,
        prompts: c?.prompts.length ?? 0,
      },
      leftOut: c?.leftOut ?? [],
      resourceConflicts: this.resourceConflicts.slice(0, RESOURCE_CONFLICTS_SHOWN).map((r) => ({
        uri: r.uri.slice(0, 128),
        keptBy: r.keptBy,
        template: r.template?.slice(0, 128) ?? null,
      })),
      viewConflicts: this.viewConflicts.slice(0, RESOURCE_CONFLICTS_SHOWN).map((v) => ({
        tool: v.tool.slice(0, 128),
        resourceUri: v.resourceUri.slice(0, 128),
        servedBy: v.servedBy,
      })),
      lastAttemptAt: this.lastAttemptAt?.toISOString() ?? null,
      lastSuccessAt: this.lastSuccessAt?.toISOString() ?? null,
      consecutiveFailures: this.consecutiveFailures,
      lastErrorType: this.lastErrorType ?? null,
      source: this.lastGood?.source ?? null,
      ageSeconds:
        this.lastGood === undefined
          ? null
          : Math.max(0, Math.floor((now.getTime() - this.lastGood.fetchedAt.getTime()) / 1000)),
    };
  }
}
