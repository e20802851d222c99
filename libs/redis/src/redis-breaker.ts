import type { RedisClient } from './redis-client';
import type { StoreLog } from './store-attempts';

/** The first wait before Redis is asked again after it failed to answer. */
export const BREAKER_FIRST_RETRY_MS = 500;
/** The longest wait between two probes of a Redis that does not answer. */
export const BREAKER_MAX_RETRY_MS = 10_000;

/** An error Redis answered with (READONLY, WRONGTYPE, a script's error): it is there. */
function isReply(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

/**
 * Keeps a request path off a Redis that does not answer. A connection that drops is seen by
 * ioredis (`error`, then `ready` when it is back), but a Redis that hangs with its connection
 * open (a paused process, a network black hole) only makes each command wait its
 * `commandTimeoutMillis`: every call that asks it would wait that long, for the whole outage,
 * and the commands it timed out on would still run when Redis wakes up. So once a command
 * times out or loses its connection, callers are told at once that Redis is away
 * (`available()` false) and go on without it as each store documents (docs/operations.md
 * "Redis: one server, Sentinel or Cluster"), while a background `PING`, bounded by the same
 * timeout, asks Redis again after 0.5 s, doubling to 10 s; a PING or `ready` lets commands
 * through again. An error Redis answers with (READONLY from a replica during a failover,
 * WRONGTYPE) costs no wait, so it opens nothing: the store goes on without that command.
 * One warning when the store stops working, one line when a command works again — never a
 * pair per probe.
 */
export class RedisBreaker {
  /** Commands are not sent (a timeout or a lost connection, until Redis answers). */
  private open = false;
  /** The warning was logged, and the line for "back" is owed at the next command that works. */
  private warned = false;
  private retryMs = BREAKER_FIRST_RETRY_MS;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param lines what the log says when the store stops working (`away`: what the gateway
   *   does meanwhile) and when it works again
   */
  constructor(
    private readonly client: RedisClient,
    private readonly logger: StoreLog,
    private readonly lines: { readonly away: string; readonly back: string },
  ) {
    client.on('error', () => this.failed());
    client.on('ready', () => this.reachable());
  }

  /** Whether commands may be sent now (false from a timeout until Redis answers again). */
  available(): boolean {
    return !this.open;
  }

  /** A command of the store worked. */
  answered(): void {
    this.reachable();
    if (!this.warned) return;
    this.warned = false;
    this.logger.log(this.lines.back);
  }

  /** A command failed: `err` a reply error (Redis is there) or anything else (it is away). */
  failed(err?: unknown): void {
    if (this.closed) return;
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(this.lines.away);
    }
    if (isReply(err)) return;
    this.open = true;
    this.scheduleProbe();
  }

  /** Runs `command` when Redis is available, marking the outcome; rejects at once when not. */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.open) throw new Error('Redis is not answering');
    try {
      const value = await command();
      this.answered();
      return value;
    } catch (err) {
      this.failed(err);
      throw err;
    }
  }

  /** Stops the probes (at shutdown). */
  close(): void {
    this.closed = true;
    if (this.probe !== undefined) clearTimeout(this.probe);
    this.probe = undefined;
  }

  /** Redis answers (a PING, a reconnect): commands go through again. */
  private reachable(): void {
    this.open = false;
    this.retryMs = BREAKER_FIRST_RETRY_MS;
    if (this.probe !== undefined) clearTimeout(this.probe);
    this.probe = undefined;
  }

  private scheduleProbe(): void {
    if (this.probe !== undefined || this.closed) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, BREAKER_MAX_RETRY_MS);
    this.probe = setTimeout(() => {
      this.probe = undefined;
      if (!this.open || this.closed) return;
      this.client.ping().then(
        () => this.reachable(),
        () => this.failed(),
      );
    }, wait);
    this.probe.unref();
  }
}
