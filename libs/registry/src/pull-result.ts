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
      /** The manifest as received: its bytes (not yet decoded or parsed), or its text. */
      readonly raw: Buffer | string;
      /** sha1 (base64url) of `raw`, when the puller computed it while receiving. */
      readonly digest?: string;
      readonly attemptedAt: Date;
      /**
       * Local profile, first remote pull: reads fallbackManifestFile (undefined when it cannot
       * be read), for the intake to serve when this answer is no valid manifest (contract §3,
       * §6: a pull whose manifest fails validation failed); read only then.
       */
      readonly readFallback?: () => Promise<Buffer | string | undefined>;
    }
  | {
      /**
       * The Tool Service answered 304 Not Modified (contract §6: the last good copy stays and
       * the failure count starts over); with no copy to keep it is a failed pull.
       */
      readonly bundleId: string;
      readonly kind: 'not-modified';
      readonly attemptedAt: Date;
    }
  | {
      readonly bundleId: string;
      readonly kind: 'failed';
      readonly errorType: PullErrorType;
      /** For the log only: may hold a status code or errno, never sent to clients or status. */
      readonly detail: string;
      readonly attemptedAt: Date;
      /** Local profile, first failed remote pull: the bytes of fallbackManifestFile (contract §3). */
      readonly fallbackRaw?: Buffer | string;
    };
