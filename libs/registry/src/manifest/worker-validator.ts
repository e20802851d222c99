import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { crashOf, type WorkerRequest, type WorkerResponse } from './manifest-worker-protocol';

/** Manifests at least this large are validated in a worker thread. */
export const WORKER_MIN_BYTES = 256 * 1024;

/**
 * Runs the validation of one large manifest in a short-lived worker thread (the script built
 * beside main.js). `available` is false where there is no such script (unit tests run the
 * sources): the registry then validates in slices on the main thread.
 */
export class WorkerValidator {
  readonly available: boolean;

  /** @param script the worker's entry (default: manifest-worker.js beside the running bundle) */
  constructor(private readonly script = join(__dirname, 'manifest-worker.js')) {
    this.available = existsSync(script);
  }

  /**
   * @param deadlineMillis how long the worker may take before it is terminated and its run
   *   counts as a crash (`reason: 'timeout'`): a worker that hangs must not hold the refresh
   *   round, and with it the catalog, for good (operations §2 "Large manifests")
   */
  run(request: WorkerRequest, deadlineMillis: number): Promise<WorkerResponse> {
    return new Promise((resolve) => {
      const worker = new Worker(this.script);
      let done = false;
      const finish = (response: WorkerResponse): void => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        resolve(response);
        void worker.terminate();
      };
      const deadline = setTimeout(
        () =>
          finish({
            kind: 'crashed',
            reason: 'timeout',
            name: 'WorkerTimeout',
            code: String(deadlineMillis),
            message: `the worker did not answer within ${deadlineMillis} ms and was terminated`,
          }),
        deadlineMillis,
      );
      worker.once('message', (response: WorkerResponse) => finish(response));
      worker.once('error', (err) => finish(crashOf(err)));
      worker.once('exit', (code) =>
        finish({
          kind: 'crashed',
          reason: 'crash',
          name: 'WorkerExit',
          code: String(code),
          message: `the worker exited with code ${code} before it answered`,
        }),
      );
      // The manifest bytes move to the worker; a Buffer that shares a pooled ArrayBuffer is copied first.
      const own =
        request.bytes.byteOffset === 0 &&
        request.bytes.byteLength === request.bytes.buffer.byteLength
          ? request.bytes
          : Buffer.from(request.bytes);
      worker.postMessage({ ...request, bytes: own }, [own.buffer as ArrayBuffer]);
    });
  }
}
