import { redisFailureText, redisOutcomeUnknown } from './redis-client';

/** Where a store's warnings go (a Nest Logger). */
export interface StoreLog {
  log(message: string): void;
  warn(message: string): void;
}

/**
 * Runs a shared store's commands so that a store that does not answer is told once, when it
 * stops answering, and once when it answers again — never a line per attempt — and reads as
 * undefined to the caller, which goes on from what it holds.
 */
export class StoreAttempts {
  private warned = false;

  /**
   * @param what the store, as the log lines name it ("pinned tool approvals")
   * @param meanwhile what the gateway does until it answers again
   */
  constructor(
    private readonly logger: StoreLog,
    private readonly what: string,
    private readonly meanwhile: string,
  ) {}

  /**
   * Whether the last command that failed may still have run in Redis (redisOutcomeUnknown):
   * what a write that read undefined may tell its caller.
   */
  lastOutcomeUnknown = false;

  async run<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      const value = await work();
      if (this.warned) {
        this.warned = false;
        this.logger.log(`The store of ${this.what} answers again`);
      }
      return value;
    } catch (err) {
      this.lastOutcomeUnknown = redisOutcomeUnknown(err);
      if (!this.warned) {
        this.warned = true;
        this.logger.warn(
          `The store of ${this.what} did not answer (${redisFailureText(err)}); ${this.meanwhile}`,
        );
      }
      return undefined;
    }
  }
}
