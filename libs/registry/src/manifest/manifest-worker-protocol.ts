import type { PackedTools } from './manifest-transfer';
import type { ManifestExpectations, ManifestValidation } from './validate-manifest';

/** What the registry sends the validation worker: one manifest's bytes. */
export interface WorkerRequest {
  /** Transferred, not copied: a multi-megabyte string would cost the sender tens of ms to clone. */
  readonly bytes: Uint8Array;
  readonly expect: ManifestExpectations;
  /** Digests of schemas already known to compile (not compiled again), newline-separated. */
  readonly knownGoodSchemas: string;
}

/**
 * What it answers. An accepted manifest's tools travel packed in transferred buffers (see
 * packTools); the digests of the schemas found good travel newline-separated.
 */
export type WorkerResponse =
  | {
      readonly kind: 'accepted';
      readonly bundleId: string;
      readonly revision?: string;
      readonly fingerprint: string;
      readonly tools: PackedTools;
      readonly goodSchemas: string;
    }
  | {
      readonly kind: 'rejected';
      readonly validation: Extract<ManifestValidation, { ok: false }>;
      readonly goodSchemas: string;
    }
  | { readonly kind: 'not-json'; readonly why: string }
  | {
      readonly kind: 'crashed';
      /** `timeout`: terminated at its deadline (operations §2); `crash`: it died on its own. */
      readonly reason: WorkerCrashReason;
      /**
       * The error's name (`Error`, `RangeError`), `WorkerExit` for an exit without an answer,
       * `WorkerTimeout` for a worker terminated at its deadline.
       */
      readonly name: string;
      /** Node's error code, e.g. `ERR_WORKER_OUT_OF_MEMORY`; the exit code for `WorkerExit`. */
      readonly code?: string;
      readonly message?: string;
    };

/** Why a worker gave no answer: it died (`crash`), or it was terminated at its deadline (`timeout`). */
export type WorkerCrashReason = 'crash' | 'timeout';

/** A crash as the registry logs it: the error's name, Node's code and its message. */
export function crashOf(err: unknown): Extract<WorkerResponse, { kind: 'crashed' }> {
  if (!(err instanceof Error)) return { kind: 'crashed', reason: 'crash', name: typeof err };
  const code = (err as NodeJS.ErrnoException).code;
  return {
    kind: 'crashed',
    reason: 'crash',
    name: err.name,
    ...(typeof code === 'string' && { code }),
    message: err.message.slice(0, 300),
  };
}
