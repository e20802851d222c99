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
      // The manifest bytes move to the worker in an ArrayBuffer of their own: a Buffer's may be
      // shared (a slice of a larger one, or of Node's pool, which is never transferable, and
      // Buffer.from copies small ones into the pool again), so they are copied into a fresh one.
      // A handoff that fails anyway is a crash (retried, then validated here in slices), never
      // an error out of the refresh round.
      const own = new Uint8Array(request.bytes.byteLength);
      own.set(request.bytes);
      try {
        worker.postMessage({ ...request, bytes: own }, [own.buffer]);
      } catch (err) {
        finish(crashOf(err));
      }
    });
  }
}
