import type { BundleDefinition } from '@app/config';
import { VALIDATION_ERROR_TYPES, type PullErrorType } from '../manifest/manifest-errors';
import type { AcceptedManifest } from '../manifest/manifest.types';

/** contract §9. */
export type BundleStatus = 'healthy' | 'fallback' | 'degraded' | 'unreachable' | 'disabled';

/** Where the copy a bundle serves came from ('fixture': the legacy local JSON fixture file). */
export type CopySource = 'remote' | 'fallback' | 'redis' | 'fixture';

/** A bundle's last good manifest (contract §6, §11). */
export interface LastGoodCopy {
  readonly manifest: AcceptedManifest;
  readonly source: CopySource;
  /** When the manifest was pulled from its Tool Service (for a Redis copy: by whichever replica). */
  readonly fetchedAt: Date;
  /** Digest of the manifest text it was parsed from: the same text again needs no new validation. */
  readonly textDigest?: string;
}

/** What /actuator/toolBundles shows for one bundle: no URL, no prefix, no message (contract §9). */
export interface BundleStatusView {
  readonly id: string;
  readonly status: BundleStatus;
  readonly revision: string | null;
  /** Listed tools of the served copy (`_meta.enabled: false` tools not counted). */
  readonly toolCount: number;
  readonly lastSuccessAt: string | null;
  readonly lastAttemptAt: string | null;
  readonly consecutiveFailures: number;
  /** An error type name such as ManifestTimeoutError; never a message. */
  readonly lastFailureReason: PullErrorType | null;
  /**
   * Only when the last failure is a manifest validation failure: the manifest path and the
   * rule broken, in the gateway's words (`tools[0] "my.echo": _meta.version is required`),
   * never a URL, header or fragment of the answer (contract §9). Absent otherwise.
   */
  readonly detail?: string;
  /** Where the served copy came from; null while there is none. */
  readonly source: CopySource | null;
  /** Age of the served copy in whole seconds since it was pulled; null while there is none. */
  readonly ageSeconds: number | null;
}

/** Mutable pull state of one configured bundle; owned by RegistryService alone. */
export class BundleRecord {
  lastGood?: LastGoodCopy;
  /** Last pull of this bundle's Tool Service that was adopted. */
  lastSuccessAt?: Date;
  lastAttemptAt?: Date;
  /** Outcome of the last attempt: true = adopted. Undefined before the first attempt. */
  lastAttemptOk?: boolean;
  consecutiveFailures = 0;
  lastFailureReason?: PullErrorType;
  /** The validation failure's detail (see BundleStatusView.detail); undefined for other failures. */
  lastFailureDetail?: string;

  constructor(readonly definition: BundleDefinition) {}

  get status(): BundleStatus {
    if (!this.definition.enabled) return 'disabled';
    if (this.lastGood === undefined) return 'unreachable';
    if (this.lastGood.source === 'fallback') return 'fallback';
    const pulledHere = this.lastGood.source === 'remote' || this.lastGood.source === 'fixture';
    return this.lastAttemptOk === true && pulledHere ? 'healthy' : 'degraded';
  }

  /** Records an adopted pull; returns how many failed pulls it ends (0 when none). */
  recordSuccess(at: Date): number {
    const ended = this.consecutiveFailures;
    this.lastSuccessAt = at;
    this.lastAttemptOk = true;
    this.consecutiveFailures = 0;
    this.lastFailureReason = undefined;
    this.lastFailureDetail = undefined;
    return ended;
  }

  /** @param detail only for a manifest validation failure (VALIDATION_ERROR_TYPES) */
  recordFailure(reason: PullErrorType, detail?: string): void {
    this.lastAttemptOk = false;
    this.consecutiveFailures += 1;
    this.lastFailureReason = reason;
    this.lastFailureDetail = VALIDATION_ERROR_TYPES.has(reason) ? detail : undefined;
  }

  view(now: Date): BundleStatusView {
    const copy = this.lastGood;
    return {
      id: this.definition.id,
      status: this.status,
      revision: copy?.manifest.revision ?? null,
      toolCount: copy ? copy.manifest.tools.filter((t) => t.enabled).length : 0,
      lastSuccessAt: this.lastSuccessAt?.toISOString() ?? null,
      lastAttemptAt: this.lastAttemptAt?.toISOString() ?? null,
      consecutiveFailures: this.consecutiveFailures,
      lastFailureReason: this.lastFailureReason ?? null,
      ...(this.lastFailureDetail !== undefined ? { detail: this.lastFailureDetail } : {}),
      source: copy?.source ?? null,
      ageSeconds: copy
        ? Math.max(0, Math.floor((now.getTime() - copy.fetchedAt.getTime()) / 1000))
        : null,
    };
  }
}
