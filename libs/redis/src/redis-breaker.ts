import type { RedisClient } from './redis-client';
import type { StoreLog } from './store-attempts';

/** The first wait before Redis is asked again after it failed to answer. */
export const BREAKER_FIRST_RETRY_MS = 500;
/** The longest wait between two probes of a Redis that does not answer. */
export const BREAKER_MAX_RETRY_MS = 10_000;

/**
 * Keeps a request path off a Redis that does not answer. A connection that drops is seen by
 * ioredis (`error`, then `ready` when it is back), but a Redis that hangs with its connection
 * open (a paused process, a network black hole) only makes each command wait its
 * `commandTimeoutMillis`: every call that asks it would wait that long, for the whole outage,
 * and the commands it timed out on would still run when Redis wakes up. So once a command
 * fails, callers are told at once that Redis is away (`available()` false) and go on without it
 * as each store documents (docs/operations.md §9 "Redis"), while a background `PING`, bounded by
 * the same timeout, asks Redis again after 0.5 s, doubling to 10 s; the first answer (a PING or
 * `ready`) makes it available again. One warning when it goes away, one line when it is back.
 */
export class RedisBreaker {
  private healthy = true;
  private retryMs = BREAKER_FIRST_RETRY_MS;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param lines what the log says when Redis goes away (`away`: what the gateway does
   *   meanwhile) and when it is back
   */
  constructor(
    private readonly client: RedisClient,
    private readonly logger: StoreLog,
    private readonly lines: { readonly away: string; readonly back: string },
  ) {
    client.on('error', () => this.failed());
    client.on('ready', () => this.answered());
  }

  /** Whether commands may be sent now (false from a failure until Redis answers again). */
  available(): boolean {
    return this.healthy;
  }

  /** A command of the store answered. */
  answered(): void {
    if (this.healthy) return;
    this.healthy = true;
    this.retryMs = BREAKER_FIRST_RETRY_MS;
    if (this.probe !== undefined) clearTimeout(this.probe);
    this.probe = undefined;
    this.logger.log(this.lines.back);
  }

  /** A command of the store failed (or the connection did): Redis is away until it answers. */
  failed(): void {
    if (this.closed) return;
    if (this.healthy) {
      this.healthy = false;
      this.logger.warn(this.lines.away);
    }
    this.scheduleProbe();
  }

  /** Runs `command` when Redis is available, marking the outcome; rejects at once when not. */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (!this.healthy) throw new Error('Redis is not answering');
    try {
      const value = await command();
      this.answered();
      return value;
    } catch (err) {
      this.failed();
      throw err;
    }
  }

  /** Stops the probes (at shutdown). */
  close(): void {
    this.closed = true;
    if (this.probe !== undefined) clearTimeout(this.probe);
    this.probe = undefined;
  }

  private scheduleProbe(): void {
    if (this.probe !== undefined || this.closed) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, BREAKER_MAX_RETRY_MS);
    this.probe = setTimeout(() => {
      this.probe = undefined;
      if (this.healthy || this.closed) return;
      this.client.ping().then(
        () => this.answered(),
        () => this.failed(),
      );
    }, wait);
    this.probe.unref();
  }
}
