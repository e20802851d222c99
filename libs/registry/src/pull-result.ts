import type { PullErrorType } from './manifest/manifest-errors';

/**
 * The outcome of pulling one bundle's manifest, as a value (contract §6: a failure is a
 * result, never an exception that could sink the other bundles). Produced by DiscoveryModule,
 * consumed by RegistryService.applyRound.
 */
export type BundlePullResult =
  | {
      readonly bundleId: string;
      readonly kind: 'manifest';
      /** The manifest text as received (decoded UTF-8), not yet parsed. */
      readonly text: string;
      readonly attemptedAt: Date;
    }
  | {
      readonly bundleId: string;
      readonly kind: 'failed';
      readonly errorType: PullErrorType;
      /** For the log only: may hold a status code or errno, never sent to clients or status. */
      readonly detail: string;
      readonly attemptedAt: Date;
      /** Local profile, first failed remote pull: the text of fallbackManifestFile (contract §3). */
      readonly fallbackText?: string;
    };
